import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A listening Unix stream socket, non-blocking: the control server's. Its owner waits for
/// readiness (a dispatch source) and accepts until `accept` says nothing is waiting. The
/// descriptor is closed by `close()`, never by deinit: a dispatch source may still watch it,
/// and it may be closed only once the source is cancelled.
public struct UnixListener: Sendable {
    /// The socket file it is bound to, for messages.
    public let path: String
    public let descriptor: Int32

    /// Binds `path` (which must not exist) and listens, with `backlog` connections waiting
    /// to be accepted at most.
    public static func listen(path: String, backlog: Int32) throws(SystemError) -> UnixListener {
        var address = try unixSocketAddress(path)
        let raw = try retryingOnInterrupt("socket", path: path) {
            Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = SystemError("bind", path: path, errno: .current)
            _ = Glibc.close(raw)
            throw error
        }
        guard Glibc.listen(raw, backlog) == 0 else {
            let error = SystemError("listen", path: path, errno: .current)
            _ = Glibc.close(raw)
            throw error
        }
        return UnixListener(path: path, descriptor: raw)
    }

    /// A connection waiting to be accepted, as a non-blocking, close-on-exec descriptor the
    /// caller owns; nil when none is waiting. A connection its client gave up on before it
    /// was accepted (ECONNABORTED) is skipped. Out of descriptors (EMFILE, ENFILE) is thrown:
    /// the connection stays waiting, and the listener stays readable.
    public func accept() throws(SystemError) -> Int32? {
        #if DEBUG
        if let injected = FaultInjection.failure(of: "accept", path: path) { throw SystemError("accept", path: path, errno: injected) }
        #endif
        while true {
            let raw = CEarshotLinux_accept_nonblocking(descriptor)
            if raw >= 0 { return raw }
            let error = Errno.current
            switch error {
            case .interrupted, .connectionAbort: continue
            case .wouldBlock, .resourceTemporarilyUnavailable: return nil
            default: throw SystemError("accept", path: path, errno: error)
            }
        }
    }

    /// The same listener, named by `path` in messages: the socket file was moved there.
    public func moved(to path: String) -> UnixListener { UnixListener(path: path, descriptor: descriptor) }

    /// Closes the listening descriptor (not the socket file).
    public func close() { _ = Glibc.close(descriptor) }
}

/// Reading and writing a non-blocking stream socket (the control server's connections): what
/// would block says so instead of waiting.
public enum NonblockingSocket {
    public enum Received: Equatable, Sendable {
        /// This many bytes were read into the buffer.
        case bytes(Int)
        /// Nothing to read now.
        case wouldBlock
        /// The peer closed its side: no more input.
        case end
    }

    /// Reads what is there into `buffer`. A reset connection is the end too (ECONNRESET).
    public static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Received {
        while true {
            let count = Glibc.recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .end }
            let error = Errno.current
            switch error {
            case .interrupted: continue
            case .wouldBlock, .resourceTemporarilyUnavailable: return .wouldBlock
            case .connectionReset: return .end
            default: throw SystemError("recv", errno: error)
            }
        }
    }

    /// Writes what the socket takes now of `bytes`: the count written, 0 when it takes
    /// nothing now. A peer that went away is an error (EPIPE, ECONNRESET), never a SIGPIPE.
    public static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return count }
            let error = Errno.current
            switch error {
            case .interrupted: continue
            case .wouldBlock, .resourceTemporarilyUnavailable: return 0
            default: throw SystemError("send", errno: error)
            }
        }
    }

    /// Whether the peer has closed both directions (POLLHUP), not just its sending side: after
    /// the end of the input, a peer that only shut down its writing half still reads.
    public static func peerHungUp(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    /// Closes `descriptor`, once no dispatch source watches it any more.
    public static func close(_ descriptor: Int32) { _ = Glibc.close(descriptor) }
}

/// Sockets watched for nothing but their peer going away altogether: the descriptor becomes
/// readable once one of them is gone (CEarshotLinux_hangup_watch_create says why a server needs
/// it). Its owner waits on `descriptor` (a dispatch source) and asks `gone()`.
public struct HangUpWatch: Sendable {
    public let descriptor: Int32

    public static func create() throws(SystemError) -> HangUpWatch {
        let raw = CEarshotLinux_hangup_watch_create()
        guard raw >= 0 else { throw SystemError("epoll_create1", errno: .current) }
        return HangUpWatch(descriptor: raw)
    }

    /// Watches `socket`, reported as `token` once it is gone.
    public func add(_ socket: Int32, token: UInt64) throws(SystemError) {
        guard CEarshotLinux_hangup_watch_add(descriptor, socket, token) == 0 else { throw SystemError("epoll_ctl ADD", errno: .current) }
    }

    /// Stops watching `socket` (before it is closed).
    public func remove(_ socket: Int32) {
        _ = CEarshotLinux_hangup_watch_remove(descriptor, socket)
    }

    /// The tokens of the watched sockets whose peers are gone now (at most 64 at a time).
    public func gone() -> [UInt64] {
        var tokens = [UInt64](repeating: 0, count: 64)
        let count = CEarshotLinux_hangup_watch_gone(descriptor, &tokens, Int32(tokens.count))
        return count > 0 ? Array(tokens[..<Int(count)]) : []
    }

    /// Closes the watch, once no dispatch source watches it any more.
    public func close() { _ = Glibc.close(descriptor) }
}
