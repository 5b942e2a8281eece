import AudioGraph

extension PolicyEngine {
    /// The id of the `default` metadata `graphNamingDecisions` adds to a graph that has none:
    /// far above the ids PipeWire gives (it reuses a freed id before it takes a new one), so
    /// no object a recording adds later has it.
    public static let addedDefaultMetadataID: ObjectID = 0x7FFF_FF00

    /// The graph with this engine's decisions in its `default` metadata: where the default
    /// a start would hold (`holdCurrentDefault`: the configured one, else the effective one)
    /// is not the default decided — the output's, and the input's when it follows — the
    /// decided one is written as `default.configured.audio.sink` (`…source`), as the daemon
    /// writes it. A recording starts from this graph: a replay of it (`earshot eval`, which
    /// holds the default it finds) then starts where the engine stands, even when the engine
    /// decided from a graph that named no default yet (WirePlumber had not written one, or
    /// the daemon's write was still on its way), or from one that named another. Unchanged
    /// where the graph already names the decisions.
    public var graphNamingDecisions: Graph {
        var graph = self.graph
        for side in followsInput ? [output, input] : [output] {
            guard let decided = side.currentDefault, side.defaultFound(in: graph) != decided else { continue }
            let metadata: ObjectID
            if let existing = graph.defaultMetadata {
                metadata = existing.id
            } else {
                metadata = Self.addedDefaultMetadataID
                graph.apply(.metadata(Metadata(id: metadata, props: ["metadata.name": "default"])))
            }
            let key = side.direction == .output ? Graph.configuredSinkKey : Graph.configuredSourceKey
            graph.apply(.metadataProperty(metadata: metadata, subject: 0, key: key, type: "Spa:String:JSON", value: MetadataEntry.json(name: decided)))
        }
        return graph
    }
}
