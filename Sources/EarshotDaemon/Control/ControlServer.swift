import ControlProtocol
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
    private let acceptor: ControlAcceptor
    private let connections: ControlConnectionRegistry
    private let census: ControlCensus
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

    private init(path: String, limits: ControlLimits, acceptor: ControlAcceptor, connections: ControlConnectionRegistry,
                 census: ControlCensus, socketIdentity: FileSystem.Identity?) {
        self.path = path
        self.limits = limits
        self.acceptor = acceptor
        self.connections = connections
        self.census = census
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
        let connections = ControlConnectionRegistry(maximum: limits.maximumConnections) { closed in
            logger?.debug("control socket: gave the allocator's free memory back (\(closed) connections closed since the last time)")
        }
        let census = ControlCensus()
        let acceptor = ControlAcceptor(listener: listener, control: control, limits: limits, connections: connections, census: census)
        acceptor.start()
        let server = ControlServer(path: path, limits: limits, acceptor: acceptor, connections: connections, census: census,
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
        if watcher == nil { ControlConnectionRegistry.warn("control socket: cannot watch \(path) for deletion: a deleted socket file is made again only at a restart") }
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
                ControlConnectionRegistry.warn("control socket: \(path) was deleted and cannot be made again (\(failure.map { "\($0)" } ?? "")); clients reach the daemon again after a restart or the next change there\(say > 1 ? " (\(say) times since this was last said)" : "") (said at most once a minute)")
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
            ControlConnectionRegistry.warn("control socket: \(path) was deleted: made again\(say > 1 ? " (\(say) times since this was last said)" : "") (said at most once a minute)")
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

    /// What the socket holds now (`status`'s `diagnostics.control`): connections open and
    /// settling, the objects behind them, the bytes queued for clients.
    public var socketCounts: ControlWire.ControlSocketCounts { connections.counts(census) }
}
