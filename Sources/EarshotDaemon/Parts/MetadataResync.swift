import AudioGraph
import RoutingPolicy
import Logging
import Synchronization
import SystemBridge

/// Reads the `default` metadata afresh after a PipeWire client ends, so a change PipeWire did
/// not pass on is seen (issue 28, docs/reliability.md).
///
/// PipeWire's metadata module drops an exporter's property events for every settled binding
/// while another client's bind of that metadata waits for the exporter's answer
/// (`PipeWireConnection.rereadMetadata` says where). The clients that bind, write and go are
/// the command-line tools: `wpctl set-default` binds the `default` metadata twice and writes
/// once the first bind is answered, so its pick, and WirePlumber's answer to it, can pass
/// Earshot by. When a client ends, whatever it wrote has reached the exporter; a fresh binding
/// then reads it. One reread at a time, at most one a second (a reread's own bind holds back
/// others' events for a round trip, so a stream of clients must not become a stream of
/// rereads); requests meanwhile are one more reread after it.
final class MetadataResync: GraphChangeObserver, Sendable {
    static let spacing: Duration = .seconds(1)

    private struct State {
        /// `default` metadata objects whose effective default moved unexplained this turn.
        var suspects: Set<ObjectID> = []
        var running = false
        /// The newest request made while one ran: read once more after it.
        var next: (connection: any PipeWireCommands, ids: [ObjectID])?
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    var observedKinds: GraphChangeKinds { [.removed, .metadataProperty] }

    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        guard case .metadataProperty(let id, 0, let key?, _, let value) = change,
            key == Graph.effectiveSinkKey || key == Graph.effectiveSourceKey,
            let metadata = turn.graph.metadata[id], metadata.name == "default"
        else { return nil }
        let configuredKey = key == Graph.effectiveSinkKey ? Graph.configuredSinkKey : Graph.configuredSourceKey
        if value.flatMap(MetadataEntry.name(inJSON:)) != metadata[0, configuredKey]?.jsonName {
            state.withLock { _ = $0.suspects.insert(id) }
        }
        return nil
    }

    /// The metadata objects to read afresh before this turn applies anything (once each).
    func takeSuspects() -> [ObjectID] {
        state.withLock { state in
            defer { state.suspects = [] }
            return state.suspects.sorted()
        }
    }

    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {
        guard case .removed(let id) = change, turn.graph.clients[id] != nil, let connection = turn.session.connection else { return }
        // Earshot's own metadata (standalone) is read locally: nothing of it can be missed.
        let own = connection.createdDefaultMetadataIDs()
        let ids = turn.graph.metadata.values.filter { $0.name == "default" && !own.contains($0.id) }.map(\.id).sorted()
        guard !ids.isEmpty else { return }
        logger.debug("client \(id) ended: reading the default metadata afresh")
        request(ids, on: connection)
    }

    private func request(_ ids: [ObjectID], on connection: any PipeWireCommands) {
        let start = state.withLock { state -> Bool in
            if state.running {
                state.next = (connection, ids)
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        let logger = logger
        Task { [self] in
            var work: (connection: any PipeWireCommands, ids: [ObjectID])? = (connection, ids)
            while let (connection, ids) = work {
                let began = ContinuousClock.now
                for id in ids {
                    do {
                        let corrected = try await connection.rereadMetadata(id: id)
                        logger.debug("default metadata \(id) read afresh: \(corrected) entries put right")
                        if corrected > 0 {
                            logger.info("default metadata \(id): \(corrected) change(s) PipeWire did not pass on, read afresh (a client's bind of it was pending)")
                        }
                    } catch {
                        logger.debug("default metadata \(id) not read afresh: \(error)")
                    }
                }
                work = state.withLock { state in
                    defer { state.next = nil }
                    if state.next == nil { state.running = false }
                    return state.next
                }
                if work != nil { try? await Task.sleep(until: began + Self.spacing) }
            }
        }
    }
}
