import AudioGraph

/// The sink each playback stream last played to. A stream keeps its entry while unlinked: a
/// sink's links are removed before the sink itself, and a move unlinks before it relinks, so
/// only this memory still says, at the decision, which processes were playing on the old sink.
public struct LastPlayedSinks: Sendable, Hashable {
    /// node.name of the sink, by stream node id.
    public private(set) var sinks: [ObjectID: String] = [:]

    public init() {}

    /// Starts over from a whole graph (on connecting).
    public mutating func rebuild(from graph: Graph) {
        sinks = [:]
        for link in graph.links.values.sorted(by: { $0.id < $1.id }) { note(link, in: graph) }
    }

    /// Follows one change; `graph` is the graph after it.
    public mutating func record(_ change: GraphChange, in graph: Graph) {
        switch change {
        case .link(let link): note(link, in: graph)
        // Node ids are reused at once: a stream that went must not lend its sink to the next.
        case .removed(let id): sinks[id] = nil
        default: break
        }
    }

    private mutating func note(_ link: Link, in graph: Graph) {
        guard let stream = graph.nodes[link.outputNode], stream.isPlaybackStream,
            let sink = graph.nodes[link.inputNode], sink.isAudioSink, let name = sink.name
        else { return }
        sinks[stream.id] = name
    }

    /// The processes (`application.process.id` of each stream's client) whose streams last
    /// played on `sink` and are still in `graph`.
    public func processIDs(playingOn sink: String, in graph: Graph) -> Set<Int32> {
        var result: Set<Int32> = []
        for (streamID, name) in sinks where name == sink {
            guard let stream = graph.nodes[streamID], let client = stream.clientID.flatMap({ graph.clients[$0] }),
                let pid = client.props["application.process.id"].flatMap({ Int32($0) })
            else { continue }
            result.insert(pid)
        }
        return result
    }
}
