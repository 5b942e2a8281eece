import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A connected Unix stream socket, blocking; deinit closes it. The control client's, and the
/// control server's probe for a live daemon before it replaces a socket file.
public final class UnixStreamSocket {
    /// The socket file this connects to, for messages.
    public let path: String
    private let socket: FileDescriptor
    private var owned = true

    private init(path: String, socket: FileDescriptor) {
        self.path = path
        self.socket = socket
    }

    deinit { if owned { _ = try? socket.close() } }

    /// Hands the descriptor over to a caller that closes it itself (tests and tools that
    /// drive the socket byte by byte); this object no longer closes it.
    public func releaseDescriptor() -> Int32 {
        owned = false
        return socket.rawValue
    }

    /// The descriptor, for waiting on it beside others (`Readiness.wait`). Owned by this
    /// object: don't close it.
    public var descriptor: Int32 { socket.rawValue }

    /// Connects to the socket at `path`; throws the errno of socket() or connect()
    /// (ECONNREFUSED: a socket file nobody listens on; ENOENT: no file).
    /// - Parameter timeout: how long a connect may wait for the listener to accept (a listener
    ///   whose backlog is full, as a daemon out of descriptors leaves it, would hold a blocking
    ///   connect for ever); then it fails with EAGAIN.
    public static func connect(path: String, timeout: Duration = .seconds(5)) throws(SystemError) -> UnixStreamSocket {
        var address = try unixSocketAddress(path)
        let raw = try retryingOnInterrupt("socket", path: path) {
            Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let connection = UnixStreamSocket(path: path, socket: FileDescriptor(rawValue: raw))
        // A Unix socket's connect waits as long as its send timeout.
        let (seconds, attoseconds) = timeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        _ = setsockopt(raw, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var none = timeval(tv_sec: 0, tv_usec: 0)
            _ = setsockopt(raw, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        // connect is not restarted after EINTR (the connection goes on in the background);
        // a blocking Unix socket connects at once or fails, so EINTR is reported as it is.
        guard result == 0 else { throw SystemError("connect", path: path, errno: .current) }
        return connection
    }

    /// Sends every byte, retrying short writes and interruptions. A peer that went away is an
    /// error (EPIPE), not a SIGPIPE that kills the process.
    public func sendAll(_ bytes: some Sequence<UInt8>) throws(SystemError) {
        let data = Array(bytes)
        var offset = 0
        while offset < data.count {
            let written = try retryingOnInterrupt("send", path: path) {
                data[offset...].withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            offset += written
        }
    }

    /// Reads what is there, up to `maximum` bytes, blocking until something is; an empty
    /// result is the end of the stream (the peer closed).
    public func receive(maximum: Int = 65536) throws(SystemError) -> [UInt8] {
        try Readiness.read(descriptor, maximum: maximum, what: path)
    }

    /// Like `receive` but never blocks: nil when nothing is there yet.
    public func receiveAvailable(maximum: Int = 65536) throws(SystemError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count >= 0 { return Array(buffer[..<count]) }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock || error == .resourceTemporarilyUnavailable { return nil }
            throw SystemError("recv", path: path, errno: error)
        }
    }
}

/// Waiting for descriptors to become readable (poll) and reading them: the CLI's loops over
/// stdin and the control socket.
public enum Readiness {
    /// Waits until one of `descriptors` is readable, hung up or in error, or `timeout` passes
    /// (nil: no limit); returns those that are ready, empty on timeout. A signal ends the wait
    /// early with an empty result, as a timeout would.
    public static func wait(_ descriptors: [Int32], timeout: Duration?) throws(SystemError) -> Set<Int32> {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&entries, nfds_t(entries.count), timeout.map(milliseconds) ?? -1)
        if ready < 0 {
            let error = Errno.current
            if error == .interrupted { return [] }
            throw SystemError("poll", errno: error)
        }
        return Set(entries.filter { $0.revents != 0 }.map(\.fd))
    }

    /// Reads up to `maximum` bytes from `descriptor` (retrying interruptions); empty at the end.
    /// `what` names the file in an error.
    public static func read(_ descriptor: Int32, maximum: Int = 65536, what: String? = nil) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let count = try systemCall("read", path: what) {
            try buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: descriptor).read(into: $0, retryOnInterrupt: true) }
        }
        return Array(buffer[..<count])
    }

    /// The standard input's descriptor.
    public static var standardInput: Int32 { FileDescriptor.standardInput.rawValue }

    /// A timeout in whole milliseconds, rounded up so a wait never ends before its deadline.
    static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}

/// Who this process is.
public enum CurrentProcess {
    /// The real user id (getuid).
    public static var userID: UInt32 { getuid() }
    /// The real group id (getgid): the user's primary group.
    public static var groupID: UInt32 { getgid() }

    /// Raises the soft limit on open descriptors to the hard one (a daemon serving many clients
    /// must not run out at the usual 1024); returns the limit now in force (nil when it cannot
    /// be read).
    @discardableResult
    public static func raiseDescriptorLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
    /// The soft limit on open descriptors now in force (nil when it cannot be read, or there
    /// is none).
    public static var descriptorLimit: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// How many descriptors the process has open now (the entries of /proc/self/fd, less the
    /// one reading it); nil when it cannot be read (no /proc, or no descriptor left to read it
    /// with). Linear in the count: for a caller near a low limit, not a hot path.
    public static func openDescriptorCount() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return max(0, count - 1)
    }

    /// The process id (getpid).
    public static var id: Int32 { getpid() }

    /// Gives the memory the allocator holds free back to the system (glibc's malloc_trim):
    /// after a burst of clients left, the heap keeps the pages they used until told. A few
    /// milliseconds for a heap of 100 MB; call it off the latency path.
    public static func returnFreedMemory() {
        _ = CEarshotLinux_malloc_trim()
    }
}

/// `path` as a `sockaddr_un`; a path too long for one is refused (ENAMETOOLONG) rather than cut.
func unixSocketAddress(_ path: String) throws(SystemError) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw SystemError("connect", path: path, detail: "longer than a socket address holds", errno: .fileNameTooLong)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return address
}
