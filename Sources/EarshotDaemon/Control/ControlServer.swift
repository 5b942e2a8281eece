import ControlProtocol
import RoutingPolicy
import Dispatch
import FoundationEssentials
import Logging
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
    private let closed = Mutex(false)
    /// The socket file this server made last (removed at close only if it is still that one),
    /// and the watch that makes it again.
    private let watch: Mutex<SocketFileWatch>

    private struct SocketFileWatch {
        var identity: FileSystem.Identity?
        var watcher: FileChangeWatcher?
        var closed = false
        /// When making it again was last said, and how often it was made since.
        var remadeSaid: ContinuousClock.Instant?
        var remadeUnsaid = 0
    }

    private init(path: String, limits: ControlLimits, acceptor: Acceptor, connections: ConnectionRegistry,
                 socketIdentity: FileSystem.Identity?) {
        self.path = path
        self.limits = limits
        self.acceptor = acceptor
        self.connections = connections
        watch = Mutex(SocketFileWatch(identity: socketIdentity))
    }

    /// Listens on `path` (created mode 0600, its directory 0700 if missing). A socket file
    /// nobody answers on is replaced; one a live daemon answers on is an error. A socket file
    /// deleted while the server runs is made again (its directory is watched).
    public static func start(
        path: String = ControlSocketPath.default(), control: any DaemonControl, limits: ControlLimits = ControlLimits(),
        logger: Logger? = nil
    ) async throws(ControlServerError) -> ControlServer {
        try ControlSocketFile.prepareDirectory(for: path)
        try ControlSocketFile.clearStale(at: path)
        let listener = try listen(at: path)
        let connections = ConnectionRegistry(maximum: limits.maximumConnections) { closed in
            logger?.debug("control socket: gave the allocator's free memory back (\(closed) connections closed since the last time)")
        }
        let acceptor = Acceptor(listener: listener, control: control, limits: limits, connections: connections)
        acceptor.start()
        let server = ControlServer(path: path, limits: limits, acceptor: acceptor, connections: connections,
                                   socketIdentity: ControlSocketFile.identity(of: path))
        server.watchSocketFile()
        return server
    }

    /// A listener at `path`, which must not exist: it listens on a temporary name, is
    /// restricted, then renamed into place, so a client that sees `path` can connect (a socket
    /// file appears at bind, before listen) and it is 0600.
    /// `replacing: false` (making a deleted one again): the file is linked into place, never
    /// over a socket someone else put there meanwhile (EEXIST then).
    private static func listen(at path: String, replacing: Bool = true) throws(ControlServerError) -> UnixListener {
        let temporary = "\(path).tmp-\(CurrentProcess.id)"
        _ = try? FileSystem.remove(temporary)
        var listener: UnixListener
        do {
            listener = try UnixListener.listen(path: temporary, backlog: listenBacklog)
        } catch {
            throw .socket(path, "cannot listen: \(error.reason)")
        }
        do throws(ControlServerError) {
            try ControlSocketFile.restrictToOwner(temporary)
            do {
                if replacing {
                    try FileSystem.rename(temporary, to: path)
                } else {
                    try FileSystem.link(temporary, to: path)
                    _ = try? FileSystem.remove(temporary)
                }
                listener = listener.moved(to: path)
            } catch {
                throw ControlServerError.socket(path, "cannot move the socket into place: \(error.reason)")
            }
        } catch {
            listener.close()
            _ = try? FileSystem.remove(temporary)
            throw error
        }
        return listener
    }

    /// Connections the kernel holds for accepting: a burst of clients (300 at once) waits here
    /// instead of seeing EAGAIN at connect (64 did). The kernel caps it at net.core.somaxconn.
    static let listenBacklog: Int32 = 4096

    // MARK: The socket file

    /// Watches the socket's directory: a socket file deleted (a cleaner of /run/user, a user's
    /// rm) is made again at once, or clients would find no daemon until a restart.
    private func watchSocketFile() {
        let watcher = try? FileChangeWatcher(paths: [path], threadName: "earshot-socket") { [weak self] _ in
            self?.socketFileChanged()
        }
        watch.withLock { $0.watcher = watcher }
        if watcher == nil { ConnectionRegistry.warn("control socket: cannot watch \(path) for deletion: a deleted socket file is made again only at a restart") }
    }

    private func socketFileChanged() {
        let stillThere = watch.withLock { state -> Bool in
            guard !state.closed else { return true }
            return ControlSocketFile.identity(of: path) != nil
        }
        guard !stillThere else { return }
        let failure: ControlServerError?
        let listener: UnixListener?
        do {
            try ControlSocketFile.prepareDirectory(for: path)
            listener = try Self.listen(at: path, replacing: false)
            failure = nil
        } catch {
            listener = nil
            failure = error
        }
        let made = listener.flatMap { _ in ControlSocketFile.identity(of: path) }
        let now = ContinuousClock.now
        let (kept, say) = watch.withLock { state -> (Bool, Int?) in
            guard !state.closed else { return (false, nil) }
            if listener != nil { state.identity = made }
            state.remadeUnsaid += 1
            // Said at most once a minute: a loop deleting it must not flood the log.
            guard state.remadeSaid.map({ now - $0 >= .seconds(60) }) ?? true else { return (true, nil) }
            defer {
                state.remadeSaid = now
                state.remadeUnsaid = 0
            }
            return (true, state.remadeUnsaid)
        }
        guard let listener else {
            if kept, let say {
                ConnectionRegistry.warn("control socket: \(path) was deleted and cannot be made again (\(failure.map { "\($0)" } ?? "")); clients reach the daemon again after a restart or the next change there\(say > 1 ? " (\(say) times since this was last said)" : "") (said at most once a minute)")
            }
            return
        }
        guard kept else {
            // Stopping meanwhile: the file made for nothing goes too.
            listener.close()
            ControlSocketFile.remove(path, ifStill: made)
            return
        }
        acceptor.replaceListener(listener)
        if let say {
            ConnectionRegistry.warn("control socket: \(path) was deleted: made again\(say > 1 ? " (\(say) times since this was last said)" : "") (said at most once a minute)")
        }
    }

    /// Stops listening and removes the socket file (if it is still the one this server made);
    /// connected clients are served on. A stopping daemon calls it first, so a client that its
    /// stop disconnects (a subscriber whose events end) cannot connect again to the daemon on
    /// its way out, and waits for the next one instead. Safe to call twice.
    public func stopListening() async {
        let (watcher, identity, first) = watch.withLock { state in
            defer {
                state.watcher = nil
                state.closed = true
            }
            return (state.watcher, state.identity, !state.closed)
        }
        guard first else { return }
        watcher?.stop()
        await acceptor.stop()
        ControlSocketFile.remove(path, ifStill: identity)
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
        await stopListening()
        let open = connections.closeAll()
        for connection in open { connection.connection.close() }
        for connection in open { await connection.session?.finished() }
    }

    /// Connected clients now (for tests and status).
    public var connectionCount: Int { connections.count }
}

/// Accepts connections on the control queue while the listener is readable, and admits
/// each: the registry's cap first, then the peer's uid (ControlConnectionHandler).
private final class Acceptor: @unchecked Sendable {
    private let control: any DaemonControl
    private let limits: ControlLimits
    private let connections: ConnectionRegistry
    private let queue = DispatchQueue(label: "earshot.control")
    private let readBuffer = ControlReadBuffer()
    /// The descriptor limit kept under, and the number from which a connection is shed
    /// (ControlLimits.sheddingDescriptor); nil: no limit.
    private let descriptorLimit: UInt64?
    private let sheddingDescriptor: Int32?
    private let hangUps: ControlHangUpWatcher
    private let allowedUID = CurrentProcess.userID
    // On `queue` only (set up in init, before the queue runs anything of it):
    private var listener: UnixListener
    private var source: DispatchSourceRead
    /// When shedding for want of descriptors was last said: at most once a minute.
    private var saidShedding: ContinuousClock.Instant?
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
        descriptorLimit = limits.descriptorLimit ?? CurrentProcess.descriptorLimit
        sheddingDescriptor = descriptorLimit.map(ControlLimits.sheddingDescriptor(limit:))
        source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: queue)
        hangUps = ControlHangUpWatcher(queue: queue)
    }

    func start() {
        source.setEventHandler { [self] in acceptAvailable() }
        source.setCancelHandler { [listener] in listener.close() }
        source.activate()
    }

    /// Listens on `new` from now on (the socket file was made again); the old listener, which
    /// no client can reach any more, is closed once its source is done with it.
    func replaceListener(_ new: UnixListener) {
        queue.async { [self] in
            guard !stopped else {
                new.close()
                return
            }
            // Clients that reached the old file before it went: taken, not dropped with it.
            if !waitingForDescriptors { acceptAvailable() }
            let old = source
            old.setCancelHandler { [listener] in listener.close() }
            old.cancel()
            if waitingForDescriptors { old.resume() }
            listener = new
            source = DispatchSource.makeReadSource(fileDescriptor: new.descriptor, queue: queue)
            source.setEventHandler { [self] in acceptAvailable() }
            source.setCancelHandler { [new] in new.close() }
            source.activate()
            if waitingForDescriptors { source.suspend() }
        }
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
            if admit(descriptor) == .shed { return pauseForRelease() }
        }
    }

    /// A connection was shed for want of descriptors: accepting waits until a descriptor is
    /// released (the shed one's, or the idle one closed for it), so a burst cannot accept past
    /// the limit in one turn while the closes are still queued; or the first retry's delay.
    private func pauseForRelease() {
        waitingForDescriptors = true
        source.suspend()
        waits += 1
        let wait = waits
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(limits.firstAcceptRetryDelay / .milliseconds(1)))) { [weak self] in
            guard let self, wait == waits else { return }
            resumeAccepting()
        }
    }

    /// Out of descriptors (EMFILE, ENFILE), or another failure of accept: the connection stays
    /// in the backlog and the listener stays readable, so retrying at once would spin. Accepting
    /// waits for a connection of its own to close (which frees a descriptor), or for the
    /// backoff's delay (descriptors freed elsewhere, a passing ENOBUFS), whichever comes first.
    private func acceptFailed(_ error: SystemError) {
        waitingForDescriptors = true
        source.suspend()
        // Out of descriptors with connections sitting idle: the oldest makes room at once (its
        // close frees a descriptor, and its release resumes accepting). Waiting instead would
        // leave the newcomer in the backlog for as long as the idle ones stay, and the table
        // full for the runtime too.
        if error.errno == .tooManyOpenFiles || error.errno == .tooManyOpenFilesInSystem, let idle = connections.closeOldestIdle() {
            idle.close()
        }
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

    /// Whether the descriptor was past the limit's ceiling (the connection, or an idle one for
    /// it, is being closed).
    private enum Admission { case withinLimit, shed }

    private func admit(_ descriptor: Int32) -> Admission {
        let connection = ControlConnection(descriptor: descriptor, queue: queue, limits: limits, readBuffer: readBuffer, hangUps: hangUps)
        let open = openDescriptors(with: descriptor)
        let short = sheddingDescriptor.map { open >= Int($0) } ?? false
        if short { saySheddingOnce(open) }
        guard connections.add(connection, descriptorsShort: short) else {
            connection.start(ControlConnection.Handlers(frame: { _ in }, inputEnded: {}, closed: {}, released: { [self] in resumeAccepting() }))
            if short {
                let error = AccessoryError(.unknown, "the daemon is short of file descriptors (\(open) open of its limit of \(descriptorLimit ?? 0), some kept spare for PipeWire, D-Bus and the runtime): try again once other clients have closed")
                connection.send(ControlWire.line(ControlWire.failure(id: nil, error)))
                connection.closeWhenFlushed()
            } else {
                connection.close()
            }
            return short ? .shed : .withinLimit
        }
        let handler = ControlConnectionHandler(connection: connection, queue: queue, control: control, limits: limits)
        handler.start(
            allowedUID: allowedUID, admitted: { session in connections.attach(session, to: connection) },
            closed: { [connections] in connections.remove(connection) },
            // Once its descriptor is really closed: accepting can go on if it waited for one.
            released: { [self] in resumeAccepting() })
        return short ? .shed : .withinLimit
    }
}

extension Acceptor {
    /// How many descriptors are open with the one just accepted: at least its number + 1
    /// (lowest first), counted under a low limit (ControlLimits.countedLimit).
    private func openDescriptors(with descriptor: Int32) -> Int {
        let lowerBound = Int(descriptor) + 1
        guard let descriptorLimit, descriptorLimit <= ControlLimits.countedLimit,
            let sheddingDescriptor, lowerBound < Int(sheddingDescriptor)
        else { return lowerBound }
        return max(lowerBound, CurrentProcess.openDescriptorCount() ?? lowerBound)
    }

    /// Shedding is said at most once a minute, with what frees it.
    private func saySheddingOnce(_ open: Int) {
        let now = ContinuousClock.now
        guard saidShedding.map({ now - $0 >= .seconds(60) }) ?? true else { return }
        saidShedding = now
        ConnectionRegistry.warn("control socket: \(open) descriptors open, near the limit: new connections close the oldest idle one or are refused until some close, keeping descriptors spare for PipeWire, D-Bus and the runtime (said at most once a minute)")
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
        /// Connections closed since then, and the fewest open meanwhile (the long-lived ones:
        /// a status bar's subscription, a `watch`).
        var closedSinceTrim = 0
        var lowSinceTrim = Int.max
    }

    /// A burst this large that has mostly left (to a quarter) gives the allocator's free
    /// memory back to the system: a daemon returns to its baseline after many clients.
    static let burstWorthTrimming = 64
    /// So do this many clients come and gone one after another (a status bar's `earshot
    /// status`, a script's loop: never many at once, yet 3000 of them left the heap in pieces,
    /// issue 28), once few are left open.
    static let departuresWorthTrimming = 256

    /// Told (off the control queue) each time the allocator gave memory back, with how many
    /// connections had closed since the time before: the daemon's debug log.
    private let trimmed: @Sendable (Int) -> Void

    private let state = Mutex(State())
    private let maximum: Int

    init(maximum: Int, trimmed: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.maximum = max(1, maximum)
        self.trimmed = trimmed
    }

    /// Admits `connection`; at the cap (or with descriptors short) the oldest idle connection
    /// is closed to make room (said once, on stderr as the daemon's log), or, with none idle,
    /// `connection` is refused.
    func add(_ connection: ControlConnection, descriptorsShort: Bool = false) -> Bool {
        let (admitted, evicted, say) = state.withLock { state -> (Bool, ControlConnection?, String?) in
            guard !state.closing else { return (false, nil, nil) }
            var evicted: ControlConnection?
            var say: String?
            if state.connections.count >= maximum || descriptorsShort {
                if descriptorsShort {
                    guard let idle = Self.removeOldestIdle(from: &state) else { return (false, nil, nil) }
                    state.connections[ObjectIdentifier(connection)] = Connection(connection: connection, opened: ControlActivity.next())
                    return (true, idle, nil)
                }
                guard let idle = Self.removeOldestIdle(from: &state) else {
                    if !state.saidCapped { say = "control socket: \(maximum) connections open and none idle: refusing new ones until some close" }
                    state.saidCapped = true
                    return (false, nil, say)
                }
                evicted = idle
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

    /// Takes the connection idle the longest out of the registry (for its caller to close):
    /// descriptors ran out, and it makes room.
    func closeOldestIdle() -> ControlConnection? {
        state.withLock { state in
            guard !state.closing else { return nil }
            return Self.removeOldestIdle(from: &state)
        }
    }

    /// Idle the longest: the last request answered (or the admission, for one that never asked
    /// anything) longest ago. One that was answered goes before one that has not spoken yet: in
    /// a burst of one-shot clients that is one whose request is still on its way (issue 28: at
    /// the cap, 600 `earshot status` at once lost some that had just connected).
    private static func removeOldestIdle(from state: inout State) -> ControlConnection? {
        let idle = state.connections.filter { $0.value.session?.isIdle == true }.min { first, second in
            let (a, b) = (first.value, second.value)
            let (aSpoke, bSpoke) = ((a.session?.lastActivity ?? 0) > 0, (b.session?.lastActivity ?? 0) > 0)
            return aSpoke != bSpoke ? aSpoke : a.idleSince < b.idleSince
        }
        guard let idle else { return nil }
        state.connections.removeValue(forKey: idle.key)
        state.closedSinceTrim += 1
        return idle.value.connection
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
        let trim = state.withLock { state -> Int? in
            guard state.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return nil }
            state.closedSinceTrim += 1
            let open = state.connections.count
            let burstLeft = state.peak >= Self.burstWorthTrimming && open <= state.peak / 4
            state.lowSinceTrim = min(state.lowSinceTrim, open)
            // Few open beyond those that stay: long-lived connections must not keep it from
            // happening (with five, it never did).
            let manyLeft = state.closedSinceTrim >= Self.departuresWorthTrimming && open <= state.lowSinceTrim + 4
            guard burstLeft || manyLeft else { return nil }
            defer {
                state.peak = open
                state.closedSinceTrim = 0
                state.lowSinceTrim = open
            }
            return state.closedSinceTrim
        }
        // Off the control queue: trimming a large heap takes milliseconds.
        if let trim {
            let trimmed = trimmed
            Task.detached(priority: .background) {
                CurrentProcess.returnFreedMemory()
                trimmed(trim)
            }
        }
    }

    func closeAll() -> [Connection] {
        state.withLock { state in
            state.closing = true
            return Array(state.connections.values)
        }
    }

    var count: Int { state.withLock { $0.connections.count } }
}
