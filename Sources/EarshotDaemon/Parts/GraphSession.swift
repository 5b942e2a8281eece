import WireFields
import ControlProtocol
import AudioGraph
import Logging

/// The PipeWire connection as the daemon sees it: which connection is current, whether a
/// session manager runs (and so how decisions are applied), and whether a graph has been
/// seen yet. Mode detection lives here; the connection's lifecycle is `GraphFeed`'s.
struct GraphSession {
    private(set) var connection: (any PipeWireCommands)?
    private(set) var mode: ApplyMode = .disconnected
    private(set) var sessionManager: SessionManager?
    /// Set at the first graph: inputs before it (a restored or early registration, BlueZ
    /// answering first) decide over an empty graph and must not make the first real decision
    /// look like a later one.
    private(set) var hasSeenGraph = false

    /// Takes a new connection and its initial graph. Returns whether this is the first graph.
    mutating func attach(_ connection: any PipeWireCommands, graph: Graph) -> Bool {
        self.connection = connection
        _ = detectMode(in: graph)
        defer { hasSeenGraph = true }
        return !hasSeenGraph
    }

    /// Forgets `connection` if it is the current one (a stale disconnect is ignored).
    mutating func detach(_ connection: any PipeWireCommands) -> Bool {
        connection.close()
        guard self.connection === connection else { return false }
        self.connection = nil
        mode = .disconnected
        return true
    }

    /// Re-reads which session manager runs (clients come and go). Returns whether the mode
    /// changed.
    mutating func detectMode(in graph: Graph) -> Bool {
        sessionManager = SessionManagerDetector.detect(in: graph)
        let newMode: ApplyMode = sessionManager == nil ? .standalone : .cooperative
        defer { mode = newMode }
        return newMode != mode
    }

    mutating func close() {
        connection?.close()
        connection = nil
        mode = .disconnected
    }
}
