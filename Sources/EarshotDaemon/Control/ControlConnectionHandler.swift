import WireFields
import ControlProtocol
import Dispatch
import RoutingPolicy
import SystemBridge

/// One connection's admission and flow, on the control queue: admits only the daemon's own
/// uid, hands complete lines to the connection's session, and stops reading while the session
/// has `maximumQueuedRequests` unanswered (a flood waits in the client's socket).
final class ControlConnectionHandler: @unchecked Sendable {
    private let connection: ControlConnection
    private let queue: DispatchQueue
    private let control: any DaemonControl
    private let limits: ControlLimits
    private let census: ControlCensus
    private let socketCounts: @Sendable () -> ControlWire.ControlSocketCounts
    // On `queue` only:
    private var session: ControlSession?
    private var queued = 0

    init(
        connection: ControlConnection, queue: DispatchQueue, control: any DaemonControl, limits: ControlLimits, census: ControlCensus,
        socketCounts: @escaping @Sendable () -> ControlWire.ControlSocketCounts
    ) {
        self.connection = connection
        self.queue = queue
        self.control = control
        self.limits = limits
        self.census = census
        self.socketCounts = socketCounts
    }

    /// Checks who connected and starts serving, or refuses with the reason; `admitted`
    /// receives the session of an admitted connection, `closed` runs when it closes, `settled`
    /// (from any thread) once its session has nothing running after that, `released` once its
    /// descriptor is closed. On `queue`.
    func start(
        allowedUID: UInt32, admitted: (ControlSession) -> Void, closed: @escaping () -> Void, settled: @escaping @Sendable () -> Void,
        released: @escaping () -> Void
    ) {
        connection.start(ControlConnection.Handlers(
            frame: { [self] frame in received(frame) },
            inputEnded: { [self] in
                // Half-closed (e.g. socat after its stdin ends): the session answers, then closes.
                self.session?.inputEnded()
            },
            closed: { [self] in
                let session = self.session
                self.session = nil
                // Told first, so the session's end (which may settle at once) comes after it.
                closed()
                session?.end()
            },
            released: released))
        let peer: PeerCredentials
        do {
            peer = try PeerCredentials.of(socket: connection.descriptor)
        } catch {
            return refuse("cannot tell who is connecting (SO_PEERCRED: \(error)): connection refused")
        }
        guard peer.uid == allowedUID else {
            return refuse("this daemon serves uid \(allowedUID) only and uid \(peer.uid) connected: run earshot as the user whose daemon it is")
        }
        let session = ControlSession(
            connection: connection, control: control, limits: limits, census: census, socketCounts: socketCounts, settled: settled
        ) { [self] in
            queue.async { [self] in requestAnswered() }
        }
        self.session = session
        admitted(session)
        connection.resumeReading()
    }

    /// Nothing is read from a refused peer: it gets the reason, then the connection closes.
    private func refuse(_ message: String) {
        connection.send(ControlWire.line(ControlWire.failure(id: nil, AccessoryError(.invalidRequest, message))))
        connection.closeWhenFlushed()
    }

    private func received(_ frame: ControlFrame) {
        guard let session else { return }
        queued += 1
        session.receive(frame)
        if queued >= limits.maximumQueuedRequests { connection.holdReading() }
    }

    private func requestAnswered() {
        queued -= 1
        if queued < limits.maximumQueuedRequests { connection.resumeReading() }
    }
}
