import AudioGraph
import RoutingPolicy

/// The sink each playback stream last played to. A stream keeps its entry while unlinked: a
/// sink's links are removed before the sink itself, and a move unlinks before it relinks, so
/// only this memory still says, at the decision, which processes were playing on the old sink.
public struct LastPlayedSinks: Sendable, Hashable {
    /// node.name of the sink, by stream node id.
    public private(set) var sinks: [ObjectID: String] = [:]
    /// The sink each stream played on before its last move, and when it moved (policy time):
    /// a session manager that reacts to a jack before Earshot reads the card's routes has moved
    /// the streams already (WirePlumber switches away from an unplugged port itself).
    public private(set) var movedFrom: [ObjectID: Move] = [:]

    public struct Move: Sendable, Hashable {
        public var sink: String
        public var at: Milliseconds
    }

    public init() {}

    /// Starts over from a whole graph (on connecting).
    public mutating func rebuild(from graph: Graph) {
        sinks = [:]
        movedFrom = [:]
        for link in graph.links.values.sorted(by: { $0.id < $1.id }) { note(link, in: graph, at: 0) }
    }

    /// Follows one change; `graph` is the graph after it.
    public mutating func record(_ change: GraphChange, in graph: Graph, at now: Milliseconds = 0) {
        switch change {
        case .link(let link): note(link, in: graph, at: now)
        // Node ids are reused at once: a stream that went must not lend its sink to the next.
        case .removed(let id):
            sinks[id] = nil
            movedFrom[id] = nil
        default: break
        }
    }

    private mutating func note(_ link: Link, in graph: Graph, at now: Milliseconds) {
        guard let stream = graph.nodes[link.outputNode], stream.isPlaybackStream,
            let sink = graph.nodes[link.inputNode], sink.isAudioSink, let name = sink.name
        else { return }
        if let old = sinks[stream.id], old != name { movedFrom[stream.id] = Move(sink: old, at: now) }
        sinks[stream.id] = name
    }

    /// The streams that last played on `sink` and are still in `graph`, by id; with
    /// `movedOffSince`, also those that moved off it at or after that time.
    public func streams(playingOn sink: String, in graph: Graph, movedOffSince: Milliseconds? = nil) -> [Node] {
        var ids = Set(sinks.filter { $0.value == sink }.map(\.key))
        if let since = movedOffSince {
            ids.formUnion(movedFrom.filter { $0.value.sink == sink && $0.value.at >= since }.map(\.key))
        }
        return ids.sorted().compactMap { graph.nodes[$0] }
    }
}
