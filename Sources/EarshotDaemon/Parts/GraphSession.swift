import WireFields
import ControlProtocol
import AudioGraph
import Logging
import RoutingPolicy

/// The PipeWire connection as the daemon sees it: which connection is current, whether a
/// session manager runs (and so how decisions are applied), whether a graph has been seen yet,
/// and who waits for the first. Mode detection lives here (clients come and go); the
/// connection's lifecycle is `GraphFeed`'s.
/// A class: an observer of the graph (`GraphChangeObserver`), kept by the daemon's actor.
final class GraphSession: GraphChangeObserver {
    private(set) var connection: (any PipeWireCommands)?
    private(set) var mode: ApplyMode = .disconnected
    private(set) var sessionManager: SessionManager?
    /// Set at the first graph: inputs before it (a restored or early registration, BlueZ
    /// answering first) decide over an empty graph and must not make the first real decision
    /// look like a later one.
    private(set) var hasSeenGraph = false
    /// Who is told once the engine was rebased onto the first graph (the rolling recording
    /// starts its first segment from that graph: nodes present at start are not arrivals, and a
    /// replay must not see them arrive).
    private(set) var firstGraphListeners = OnceListeners(capacity: 8)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Takes a new connection and its initial graph. Returns whether this is the first graph.
    func attach(_ connection: any PipeWireCommands, graph: Graph) -> Bool {
        self.connection = connection
        _ = detectMode(in: graph)
        defer { hasSeenGraph = true }
        return !hasSeenGraph
    }

    /// Forgets `connection` if it is the current one (a stale disconnect is ignored).
    func detach(_ connection: any PipeWireCommands) -> Bool {
        connection.close()
        guard self.connection === connection else { return false }
        self.connection = nil
        mode = .disconnected
        return true
    }

    /// Runs `handler` once the first graph has come (at once, on its own task, if it has).
    func onFirstGraph(_ handler: @escaping @Sendable () async -> Void) {
        firstGraphListeners.add(handler)
    }

    /// The engine stands on the first graph now.
    func firstGraphTaken() {
        firstGraphListeners.happen()
    }

    var observedKinds: GraphChangeKinds { [.client, .removed] }

    /// A session manager's client came or went: the apply mode follows (the apply stage
    /// observes the mode in turn).
    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        if detectMode(in: turn.graph), connection != nil {
            logger.info("apply mode: \(mode.rawValue)\(sessionManager.map { " (\($0))" } ?? "")")
        }
        return nil
    }

    /// Re-reads which session manager runs. Returns whether the mode changed.
    private func detectMode(in graph: Graph) -> Bool {
        sessionManager = SessionManagerDetector.detect(in: graph)
        let newMode: ApplyMode = sessionManager == nil ? .standalone : .cooperative
        defer { mode = newMode }
        return newMode != mode
    }

    func close() {
        connection?.close()
        connection = nil
        mode = .disconnected
    }
}
