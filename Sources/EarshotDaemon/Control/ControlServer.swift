import ControlProtocol
import Dispatch
import FoundationEssentials
import Synchronization
import SystemBridge
import SystemPackage

/// The control API: a Unix socket speaking JSON Lines (docs/control-protocol.md), answering
/// through a `DaemonControl`. Only the daemon's own uid may connect. The socket's work (accept,
/// read, frame, write) runs on one serial dispatch queue, woken by dispatch sources; the
/// answers are the sessions' tasks.
public final class ControlServer: Sendable {
    public let path: String
    public let limits: ControlLimits
    private let acceptor: Acceptor
    private let connections: ConnectionRegistry
    private let socketIdentity: FileSystem.Identity?
    private let closed = Mutex(false)

    private init(path: String, limits: ControlLimits, acceptor: Acceptor, connections: ConnectionRegistry,
                 socketIdentity: FileSystem.Identity?) {
        self.path = path
        self.limits = limits
        self.acceptor = acceptor
        self.connections = connections
        self.socketIdentity = socketIdentity
    }

    /// Listens on `path` (created mode 0600, its directory 0700 if missing). A socket file
    /// nobody answers on is replaced; one a live daemon answers on is an error.
    public static func start(
        path: String = ControlSocketPath.default(), control: any DaemonControl, limits: ControlLimits = ControlLimits()
    ) async throws(ControlServerError) -> ControlServer {
        try ControlSocketFile.prepareDirectory(for: path)
        try ControlSocketFile.clearStale(at: path)
        // Listen on a temporary name, restrict it, then rename it into place: a client that
        // sees `path` can connect (a socket file appears at bind, before listen) and it is 0600.
        let temporary = "\(path).tmp-\(CurrentProcess.id)"
        _ = try? FileSystem.remove(temporary)
        var listener: UnixListener
        do {
            listener = try UnixListener.listen(path: temporary, backlog: 64)
        } catch {
            throw .socket(path, "cannot listen: \(error.reason)")
        }
        do throws(ControlServerError) {
            try ControlSocketFile.restrictToOwner(temporary)
            do {
                try FileSystem.rename(temporary, to: path)
                listener = listener.moved(to: path)
            } catch {
                throw ControlServerError.socket(path, "cannot move the socket into place: \(error.reason)")
            }
        } catch {
            listener.close()
            _ = try? FileSystem.remove(temporary)
            throw error
        }
        let connections = ConnectionRegistry(maximum: limits.maximumConnections)
        let acceptor = Acceptor(listener: listener, control: control, limits: limits, connections: connections)
        acceptor.start()
        return ControlServer(path: path, limits: limits, acceptor: acceptor, connections: connections,
                             socketIdentity: ControlSocketFile.identity(of: path))
    }

    /// Stops listening, disconnects every client, waits for requests already passed to the
    /// daemon to come back, and removes the socket file (if it is still the one this server
    /// made). Call it before stopping the engine behind `DaemonControl`. Safe to call twice.
    public func close() async {
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        await acceptor.stop()
        let open = connections.closeAll()
        for connection in open { connection.connection.close() }
        for connection in open { await connection.session?.finished() }
        ControlSocketFile.remove(path, ifStill: socketIdentity)
    }

    /// Connected clients now (for tests and status).
    public var connectionCount: Int { connections.count }
}

/// Accepts connections on the control queue while the listener is readable, and admits
/// each: the registry's cap first, then the peer's uid (ControlConnectionHandler).
private final class Acceptor: @unchecked Sendable {
    private let listener: UnixListener
    private let control: any DaemonControl
    private let limits: ControlLimits
    private let connections: ConnectionRegistry
    private let queue = DispatchQueue(label: "earshot.control")
    private let source: DispatchSourceRead
    private let readBuffer = ControlReadBuffer()
    private let hangUps: ControlHangUpWatcher
    private let allowedUID = CurrentProcess.userID
    // On `queue` only:
    /// Accepting failed (out of descriptors): it waits until a connection closes, or the
    /// backoff's time has passed (descriptors may be freed elsewhere in the daemon).
    private var waitingForDescriptors = false
    /// The next retry's delay while accepting fails: 1 s, doubling to 32 s.
    private var retryDelay: Duration
    /// Which wait a retry timer belongs to: a timer of an earlier wait does nothing.
    private var waits: UInt64 = 0
    /// When running out of descriptors was last said: at most once a minute.
    private var saidOutOfDescriptors: ContinuousClock.Instant?
    private var stopped = false

    /// Connections accepted in one turn at most, so a flood of them cannot hold the queue: the
    /// source fires again for the rest (it is level triggered).
    private static let acceptsPerTurn = 64
    private var longestRetryDelay: Duration { max(.seconds(32), limits.firstAcceptRetryDelay) }

    init(listener: UnixListener, control: any DaemonControl, limits: ControlLimits, connections: ConnectionRegistry) {
        self.listener = listener
        self.control = control
        self.limits = limits
        self.connections = connections
        retryDelay = limits.firstAcceptRetryDelay
        source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: queue)
        hangUps = ControlHangUpWatcher(queue: queue)
    }

    func start() {
        source.setEventHandler { [self] in acceptAvailable() }
        source.setCancelHandler { [listener] in listener.close() }
        source.activate()
    }

    /// Stops accepting; returns once the listening descriptor is closed.
    func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                stopped = true
                source.setCancelHandler { [listener] in
                    listener.close()
                    done.resume()
                }
                source.cancel()
                if waitingForDescriptors { source.resume() }
            }
        }
        hangUps.stop()
    }

    private func acceptAvailable() {
        for _ in 0..<Self.acceptsPerTurn {
            guard !stopped, !waitingForDescriptors else { return }
            let descriptor: Int32
            do {
                guard let accepted = try listener.accept() else { return }
                descriptor = accepted
            } catch {
                return acceptFailed(error)
            }
            retryDelay = limits.firstAcceptRetryDelay
            admit(descriptor)
        }
    }

    /// Out of descriptors (EMFILE, ENFILE), or another failure of accept: the connection stays
    /// in the backlog and the listener stays readable, so retrying at once would spin. Accepting
    /// waits for a connection of its own to close (which frees a descriptor), or for the
    /// backoff's delay (descriptors freed elsewhere, a passing ENOBUFS), whichever comes first.
    private func acceptFailed(_ error: SystemError) {
        waitingForDescriptors = true
        source.suspend()
        waits += 1
        let wait = waits
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, longestRetryDelay)
        let now = ContinuousClock.now
        if saidOutOfDescriptors.map({ now - $0 >= .seconds(60) }) ?? true {
            saidOutOfDescriptors = now
            ConnectionRegistry.warn("control socket: cannot accept a connection (\(error)): new connections wait until one closes, or \(delay) at most (said at most once a minute)")
        }
        // Weak: a server stopped meanwhile is not kept for the rest of the delay.
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay / .milliseconds(1)))) { [weak self] in
            guard let self, wait == waits else { return }
            resumeAccepting()
        }
    }

    /// Accepting again after a failure: at once, then as the listener says.
    private func resumeAccepting() {
        guard waitingForDescriptors, !stopped else { return }
        waitingForDescriptors = false
        source.resume()
        acceptAvailable()
    }

    private func admit(_ descriptor: Int32) {
        let connection = ControlConnection(descriptor: descriptor, queue: queue, limits: limits, readBuffer: readBuffer, hangUps: hangUps)
        guard connections.add(connection) else {
            connection.start(ControlConnection.Handlers(frame: { _ in }, inputEnded: {}, closed: {}, released: { [self] in resumeAccepting() }))
            connection.close()
            return
        }
        let handler = ControlConnectionHandler(connection: connection, queue: queue, control: control, limits: limits)
        handler.start(
            allowedUID: allowedUID, admitted: { session in connections.attach(session, to: connection) },
            closed: { [connections] in connections.remove(connection) },
            // Once its descriptor is really closed: accepting can go on if it waited for one.
            released: { [self] in resumeAccepting() })
    }
}

/// The open connections, so close can end them; none are admitted once closing began.
private final class ConnectionRegistry: Sendable {
    struct Connection {
        var connection: ControlConnection
        var session: ControlSession?
        /// When it was admitted, on `ControlActivity`'s count.
        var opened: UInt64 = 0

        /// Since when it has been idle: its last answered request, else its admission.
        var idleSince: UInt64 { max(opened, session?.lastActivity ?? 0) }
    }

    private struct State {
        var connections: [ObjectIdentifier: Connection] = [:]
        var closing = false
        var saidCapped = false
        /// The most connections open at once since the allocator last gave memory back.
        var peak = 0
    }

    /// A burst this large that has mostly left (to a quarter) gives the allocator's free
    /// memory back to the system: a daemon returns to its baseline after many clients.
    static let burstWorthTrimming = 64

    private let state = Mutex(State())
    private let maximum: Int

    init(maximum: Int) { self.maximum = max(1, maximum) }

    /// Admits `connection`; at the cap the oldest idle connection is closed to make room (said
    /// once, on stderr as the daemon's log), or, with none idle, `connection` is refused.
    func add(_ connection: ControlConnection) -> Bool {
        let (admitted, evicted, say) = state.withLock { state -> (Bool, ControlConnection?, String?) in
            guard !state.closing else { return (false, nil, nil) }
            var evicted: ControlConnection?
            var say: String?
            if state.connections.count >= maximum {
                // Idle the longest: the last request answered (or the admission, for one that
                // never asked anything) longest ago.
                let idle = state.connections.filter { $0.value.session?.isIdle == true }.min { $0.value.idleSince < $1.value.idleSince }
                guard let idle else {
                    if !state.saidCapped { say = "control socket: \(maximum) connections open and none idle: refusing new ones until some close" }
                    state.saidCapped = true
                    return (false, nil, say)
                }
                state.connections.removeValue(forKey: idle.key)
                evicted = idle.value.connection
                if !state.saidCapped { say = "control socket: \(maximum) connections open: closing the oldest idle ones to make room (said once)" }
                state.saidCapped = true
            }
            state.connections[ObjectIdentifier(connection)] = Connection(connection: connection, opened: ControlActivity.next())
            state.peak = max(state.peak, state.connections.count)
            return (true, evicted, say)
        }
        evicted?.close()
        if let say { ConnectionRegistry.warn(say) }
        return admitted
    }

    /// The daemon's log is its stderr (swift-log's stream handler).
    static func warn(_ line: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array("earshot: \(line)\n".utf8))
    }

    /// The session of an admitted connection, so close can wait for its requests.
    func attach(_ session: ControlSession, to connection: ControlConnection) {
        state.withLock { $0.connections[ObjectIdentifier(connection)]?.session = session }
    }

    func remove(_ connection: ControlConnection) {
        let trim = state.withLock { state -> Bool in
            state.connections.removeValue(forKey: ObjectIdentifier(connection))
            guard state.peak >= Self.burstWorthTrimming, state.connections.count <= state.peak / 4 else { return false }
            state.peak = state.connections.count
            return true
        }
        // Off the control queue: trimming a large heap takes milliseconds.
        if trim { Task.detached(priority: .background) { CurrentProcess.returnFreedMemory() } }
    }

    func closeAll() -> [Connection] {
        state.withLock { state in
            state.closing = true
            return Array(state.connections.values)
        }
    }

    var count: Int { state.withLock { $0.connections.count } }
}
