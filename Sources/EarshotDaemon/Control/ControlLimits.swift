import SystemBridge

/// The bounds that keep one client from stalling the daemon or the other clients.
public struct ControlLimits: Sendable, Hashable {
    /// A request line longer than this (without its newline) gets an error and a disconnect.
    public var maximumLineBytes: Int
    /// A client whose unread output (replies and events) passes this is disconnected. Counts
    /// what the server holds; the kernel's socket buffer (a few hundred KiB) comes on top.
    public var maximumPendingOutputBytes: Int
    /// Requests received and not yet answered; past this the server stops reading from that
    /// client until it catches up, so a flood waits in the client's socket, not in memory.
    public var maximumQueuedRequests: Int
    /// Open connections at most: a new one beyond closes the oldest idle one (no request in
    /// flight, not streaming), said once; with none idle, the new one is refused. Far below
    /// the descriptor limit, so there is always room for a new client (and for PipeWire).
    public var maximumConnections: Int
    /// A subscriber whose events written and not yet taken by its socket pass this is cut off
    /// (closed): 300 subscribers that never read held 1 MiB each (+496 MB, issue 21). The
    /// kernel's socket buffer takes a few hundred KiB first, so a reader that pauses a moment
    /// loses nothing.
    public var maximumPendingEventBytes: Int
    /// When accept fails (out of descriptors), the first retry's delay, doubling to 32 s (or to
    /// this, if longer); a connection closing retries at once.
    public var firstAcceptRetryDelay: Duration
    /// The descriptor limit the connections are kept under (nil: the process's soft limit at
    /// start). A test sets it to fill the table without lowering the test process's own.
    public var descriptorLimit: UInt64?

    /// Descriptors never given to control connections: what PipeWire, D-Bus, the drivers, the
    /// state and config files and the runtime itself open meanwhile. libdispatch's worker-pool
    /// monitor aborts the process when it cannot open /proc/<tid>/stat (issue 28: SIGILL, exit
    /// 132, with the table full of connections). An eighth of the limit, 16 to 256.
    public static func reservedDescriptors(limit: UInt64) -> UInt64 { min(256, max(16, limit / 8)) }

    /// Limits up to this are watched by counting the open descriptors at each admission (a few
    /// thousand entries at most); above it, 512 connections cannot come near the limit.
    static let countedLimit: UInt64 = 16384

    /// Under `limit`, a connection is shed once this many descriptors are open with it. Its
    /// descriptor's number is a cheap lower bound (they are handed out lowest first, so every
    /// number below it is open); under a limit of at most `countedLimit` the open descriptors
    /// are counted too (/proc/self/fd), since a closed connection's low number handed out again
    /// says nothing of those above it (a loaded run filled the table so, issue 28).
    static func sheddingDescriptor(limit: UInt64) -> Int32 {
        let reserved = reservedDescriptors(limit: limit)
        return Int32(clamping: limit > reserved ? limit - reserved : 0)
    }

    public init(
        maximumLineBytes: Int = 64 * 1024, maximumPendingOutputBytes: Int = 1 << 20, maximumQueuedRequests: Int = 32,
        maximumConnections: Int = 512, maximumPendingEventBytes: Int = 64 * 1024, firstAcceptRetryDelay: Duration = .seconds(1),
        descriptorLimit: UInt64? = nil
    ) {
        self.descriptorLimit = descriptorLimit
        self.firstAcceptRetryDelay = firstAcceptRetryDelay
        self.maximumPendingEventBytes = maximumPendingEventBytes
        self.maximumLineBytes = maximumLineBytes
        self.maximumPendingOutputBytes = maximumPendingOutputBytes
        self.maximumQueuedRequests = maximumQueuedRequests
        self.maximumConnections = maximumConnections
    }
}
