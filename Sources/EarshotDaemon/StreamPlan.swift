import WireFields
import ControlProtocol
import AudioGraph

/// What standalone mode must do so every following stream plays to the default sink: which
/// streams need ports, and which to move (link to the target first, then unlink the rest).
/// Pure: computed from the graph and the links Earshot owns.
public struct StreamPlan: Sendable, Equatable {
    public struct Move: Sendable, Equatable {
        public var stream: ObjectID
        public var target: ObjectID
        /// False when Earshot's links to the target exist already (only the break is left).
        public var needsLink: Bool
        /// Earshot's links of this stream to other nodes, destroyed once the new ones exist.
        public var obsoleteLinks: [ObjectID]

        public init(stream: ObjectID, target: ObjectID, needsLink: Bool, obsoleteLinks: [ObjectID]) {
            self.stream = stream
            self.target = target
            self.needsLink = needsLink
            self.obsoleteLinks = obsoleteLinks
        }
    }

    /// Streams without ports yet: give them DSP ports (a session manager would).
    public var configurePorts: [ObjectID] = []
    public var moves: [Move] = []

    public var isEmpty: Bool { configurePorts.isEmpty && moves.isEmpty }

    /// - Parameters:
    ///   - ownedLinks: for each stream, the links Earshot made and the node each goes to
    ///     (including links the registry has not announced yet).
    ///   - portsRequested: streams already asked to configure ports.
    public static func make(
        graph: Graph, defaultSink: String?, ownedLinks: [ObjectID: [ObjectID: ObjectID]], portsRequested: Set<ObjectID>
    ) -> StreamPlan {
        plan(
            streams: graph.playbackStreams, ports: .output, graph: graph, target: defaultSink.flatMap { graph.node(named: $0) },
            ownedLinks: ownedLinks, portsRequested: portsRequested, streamEnd: \.outputNode
        ) { pinned, named in graph.sinks.first(where: named) }
    }

    /// The plan of one direction: `streams` whose `ports` side they link by, `streamEnd` the end
    /// of a link that is the stream, `pinnedTarget` what a `target.object` names.
    private static func plan(
        streams: [Node], ports direction: PortDirection, graph: Graph, target defaultNode: Node?, ownedLinks: [ObjectID: [ObjectID: ObjectID]],
        portsRequested: Set<ObjectID>, streamEnd: KeyPath<Link, ObjectID>, ownTargets: [ObjectID: Node] = [:],
        pinnedTarget: (String, (Node) -> Bool) -> Node?
    ) -> StreamPlan {
        var plan = StreamPlan()
        guard !streams.isEmpty else { return plan }
        // One pass over ports and links (this runs on every burst of graph events), not one
        // scan of each per stream.
        let streamIDs = Set(streams.map(\.id))
        var withPorts: Set<ObjectID> = []
        for port in graph.ports.values where port.direction == direction {
            if let node = port.nodeID, streamIDs.contains(node) { withPorts.insert(node) }
        }
        var foreignLinked: Set<ObjectID> = []
        for link in graph.links.values {
            let stream = link[keyPath: streamEnd]
            if streamIDs.contains(stream), ownedLinks[stream]?[link.id] == nil { foreignLinked.insert(stream) }
        }
        for stream in streams {
            if stream.props["node.autoconnect"] == "false" { continue }
            if !withPorts.contains(stream.id) {
                if !portsRequested.contains(stream.id) { plan.configurePorts.append(stream.id) }
                continue
            }
            let owned = ownedLinks[stream.id] ?? [:]
            // Someone else linked it (by hand, or a pinned target was honoured): leave it be.
            if foreignLinked.contains(stream.id) { continue }
            let target: Node?
            if let pinned = stream.props["target.object"] ?? stream.props["node.target"] {
                // Pinned streams are linked to their target once and never moved.
                guard owned.isEmpty else { continue }
                target = pinnedTarget(pinned) { $0.name == pinned || $0.serial.map(String.init) == pinned || String($0.id) == pinned }
            } else {
                target = ownTargets[stream.id] ?? defaultNode
            }
            guard let target else { continue }
            let elsewhere = owned.filter { $0.value != target.id }.keys.sorted()
            let linkedToTarget = owned.values.contains(target.id)
            if linkedToTarget && elsewhere.isEmpty { continue }
            plan.moves.append(Move(stream: stream.id, target: target.id, needsLink: !linkedToTarget, obsoleteLinks: elsewhere))
        }
        return plan
    }
}

extension StreamPlan {
    /// The input's plan (docs/policy.md §8): capture streams that follow the default source
    /// are linked from it, make before break; pinned streams are linked to their target once
    /// and never moved; a stream someone else linked is left alone; one without input ports
    /// gets them. A move's `target` is the source, its `stream` the capture stream (the link
    /// goes source → stream).
    /// - Parameters:
    ///   - ownedLinks: for each capture stream, the links Earshot made into it and the node each
    ///     comes from (`capturedLinks(_:)` of the connection's owned links).
    ///   - calls: calls pointed at a source of their own (§8 `bluetooth-microphone = "calls"`):
    ///     linked from it, and moved with it, as others are with the default.
    public static func makeCapture(
        graph: Graph, defaultSource: String?, ownedLinks: [ObjectID: [ObjectID: ObjectID]], portsRequested: Set<ObjectID>,
        calls: [ObjectID: String] = [:]
    ) -> StreamPlan {
        plan(
            streams: graph.captureStreams, ports: .input, graph: graph, target: defaultSource.flatMap { captureTarget(named: $0, in: graph) },
            ownedLinks: ownedLinks, portsRequested: portsRequested, streamEnd: \.inputNode,
            ownTargets: calls.compactMapValues { graph.node(named: $0) }
        ) { pinned, named in
            // A source, or a sink's monitor (recording what plays there).
            graph.sources.first(where: named) ?? graph.sinks.first(where: named) ?? captureTarget(named: pinned, in: graph)
        }
    }

    /// The node a capture stream records from for the default source `name`: a source, or a
    /// sink whose monitor the user chose (named as the sink, or `<sink>.monitor`).
    static func captureTarget(named name: String, in graph: Graph) -> Node? {
        if let node = graph.node(named: name), node.isAudioSource || node.isAudioSink { return node }
        guard name.hasSuffix(".monitor"), let sink = graph.node(named: String(name.dropLast(".monitor".count))), sink.isAudioSink else { return nil }
        return sink
    }

    /// The connection's owned links (per output node: link → input node) turned around for
    /// capture streams: per input node, link → the output node it comes from.
    public static func capturedLinks(_ owned: [ObjectID: [ObjectID: ObjectID]]) -> [ObjectID: [ObjectID: ObjectID]] {
        var result: [ObjectID: [ObjectID: ObjectID]] = [:]
        for (output, links) in owned {
            for (link, input) in links { result[input, default: [:]][link] = output }
        }
        return result
    }
}
