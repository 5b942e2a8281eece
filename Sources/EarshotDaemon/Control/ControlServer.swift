import ControlProtocol
import FoundationEssentials
import NIOCore
import NIOPosix
import Synchronization
import SystemBridge
import SystemPackage

/// The control API: a Unix socket speaking JSON Lines (docs/control-protocol.md), answering
/// through a `DaemonControl`. Only the daemon's own uid may connect.
public final class ControlServer: Sendable {
    public let path: String
    public let limits: ControlLimits
    private let listener: any Channel
    private let connections: ConnectionRegistry
    private let socketIdentity: FileSystem.Identity?
    private let closed = Mutex(false)

    private init(path: String, limits: ControlLimits, listener: any Channel,
                 connections: ConnectionRegistry, socketIdentity: FileSystem.Identity?) {
        self.path = path
        self.limits = limits
        self.listener = listener
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
        // NIO's process-wide group, never shut down: a request the daemon answers after close
        // then fails its write on a closed channel instead of scheduling on a dead loop.
        let group = MultiThreadedEventLoopGroup.singleton
        let connections = ConnectionRegistry(maximum: limits.maximumConnections)
        let allowedUID = CurrentProcess.userID
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            // Each read into a buffer of at most 16 KiB (a line longer than that arrives in
            // several): a connection holds little more than its unanswered line.
            .childChannelOption(
                ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 16 * 1024))
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark,
                value: ChannelOptions.Types.WriteBufferWaterMark(
                    low: limits.maximumPendingOutputBytes / 2, high: limits.maximumPendingOutputBytes))
            .childChannelInitializer { channel in
                guard connections.add(channel) else { return channel.close() }
                channel.closeFuture.whenComplete { _ in connections.remove(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(ControlLineDecoder(maximumLineBytes: limits.maximumLineBytes)),
                        ControlConnectionHandler(control: control, limits: limits, allowedUID: allowedUID) { session in
                            connections.attach(session, to: channel)
                        },
                    ])
                }
            }
        // Listen on a temporary name, restrict it, then rename it into place: a client that
        // sees `path` can connect (a socket file appears at bind, before listen) and it is 0600.
        let temporary = "\(path).tmp-\(CurrentProcess.id)"
        _ = try? FileSystem.remove(temporary)
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(unixDomainSocketPath: temporary).get()
        } catch {
            throw .socket(path, "cannot listen: \(error)")
        }
        do throws(ControlServerError) {
            try ControlSocketFile.restrictToOwner(temporary)
            do {
                try FileSystem.rename(temporary, to: path)
            } catch {
                throw ControlServerError.socket(path, "cannot move the socket into place: \(error.reason)")
            }
        } catch {
            try? await listener.close()
            _ = try? FileSystem.remove(temporary)
            throw error
        }
        return ControlServer(path: path, limits: limits, listener: listener, connections: connections,
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
        try? await listener.close()
        let open = connections.closeAll()
        for connection in open { try? await connection.channel.close() }
        for connection in open { await connection.session?.finished() }
        ControlSocketFile.remove(path, ifStill: socketIdentity)
    }

    /// Connected clients now (for tests and status).
    public var connectionCount: Int { connections.count }
}

/// The open connections, so close can end them; none are admitted once closing began.
private final class ConnectionRegistry: Sendable {
    struct Connection {
        var channel: any Channel
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

    /// Admits `channel`; at the cap the oldest idle connection is closed to make room (said
    /// once, on stderr as the daemon's log), or, with none idle, `channel` is refused.
    func add(_ channel: any Channel) -> Bool {
        let (admitted, evicted, say) = state.withLock { state -> (Bool, (any Channel)?, String?) in
            guard !state.closing else { return (false, nil, nil) }
            var evicted: (any Channel)?
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
                evicted = idle.value.channel
                if !state.saidCapped { say = "control socket: \(maximum) connections open: closing the oldest idle ones to make room (said once)" }
                state.saidCapped = true
            }
            state.connections[ObjectIdentifier(channel)] = Connection(channel: channel, opened: ControlActivity.next())
            state.peak = max(state.peak, state.connections.count)
            return (true, evicted, say)
        }
        evicted?.close(promise: nil)
        if let say { ConnectionRegistry.warn(say) }
        return admitted
    }

    /// The daemon's log is its stderr (swift-log's stream handler).
    private static func warn(_ line: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array("earshot: \(line)\n".utf8))
    }

    /// The session of an admitted connection, so close can wait for its requests.
    func attach(_ session: ControlSession, to channel: any Channel) {
        state.withLock { $0.connections[ObjectIdentifier(channel)]?.session = session }
    }

    func remove(_ channel: any Channel) {
        let trim = state.withLock { state -> Bool in
            state.connections.removeValue(forKey: ObjectIdentifier(channel))
            guard state.peak >= Self.burstWorthTrimming, state.connections.count <= state.peak / 4 else { return false }
            state.peak = state.connections.count
            return true
        }
        // Off the event loop: trimming a large heap takes milliseconds.
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
