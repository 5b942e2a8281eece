import AudioGraph
import RoutingPolicy
import Synchronization

/// Notices the one symptom of a pick PipeWire did not pass on that Earshot would act on, so the
/// daemon reads the `default` metadata afresh before it applies anything (issue 28,
/// docs/reliability.md, "A change PipeWire does not pass on").
///
/// PipeWire's metadata module drops an exporter's property events for every settled binding
/// while another client's bind of that metadata waits for the exporter's answer
/// (`PipeWireConnection.rereadMetadata` says where). `wpctl set-default` binds the `default`
/// metadata twice and writes once the first bind is answered, so its pick can pass Earshot by;
/// WirePlumber's answer to it (the effective default moving to the picked sink) usually comes
/// after the window. Taken alone, that answer looks like WirePlumber moving away from a
/// configured default that still exists, and Earshot would write its old decision back over
/// the user's pick. So that one move — the effective default leaving a configured sink that is
/// still there, while no write of Earshot's own is in flight — is read as a possible lost pick.
///
/// A reread is itself a bind: while it waits for the exporter's answer, every *other* settled
/// binding (WirePlumber's own scripts among them, pipewire-pulse) misses what the exporter
/// sends. So nothing else triggers one: not a client's end, not a move WirePlumber has a reason
/// for (the configured sink gone, none configured), not Earshot's own write coming back.
final class MetadataResync: GraphChangeObserver, Sendable {
    /// A possible lost pick, noticed in this turn.
    struct Suspect: Hashable, Sendable {
        let metadata: ObjectID
        let direction: Direction
    }

    enum Direction: Hashable, Sendable {
        case output, input
    }

    private let suspects = Mutex<Set<Suspect>>([])

    var observedKinds: GraphChangeKinds { [.metadataProperty] }

    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        guard case .metadataProperty(let id, 0, let key?, _, let value) = change,
            key == Graph.effectiveSinkKey || key == Graph.effectiveSourceKey,
            let metadata = turn.graph.metadata[id], metadata.name == "default"
        else { return nil }
        let direction: Direction = key == Graph.effectiveSinkKey ? .output : .input
        let configuredKey = direction == .output ? Graph.configuredSinkKey : Graph.configuredSourceKey
        guard let configured = metadata[0, configuredKey]?.jsonName, turn.graph.node(named: configured) != nil,
            value.flatMap(MetadataEntry.name(inJSON:)) != configured
        else { return nil }
        suspects.withLock { _ = $0.insert(Suspect(metadata: id, direction: direction)) }
        return nil
    }

    /// The possible lost picks of this turn (each once); the caller drops those its own write
    /// in flight explains.
    func takeSuspects() -> [Suspect] {
        suspects.withLock { suspects in
            defer { suspects = [] }
            return suspects.sorted { ($0.metadata, $0.direction == .output ? 0 : 1) < ($1.metadata, $1.direction == .output ? 0 : 1) }
        }
    }
}
