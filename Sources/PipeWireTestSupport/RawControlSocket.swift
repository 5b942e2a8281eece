import AudioGraph
import Foundation
#if canImport(Glibc)
import Glibc
import SystemBridge
#endif

/// A client that does exactly what a test says, bytes and all, with a deadline on every wait.
/// Blocking calls run on threads of their own, never on the cooperative pool the server's
/// sessions need.
public final class RawControlSocket: @unchecked Sendable {
    public let fd: Int32
    /// Bytes read and not yet returned as a line; touched by one blocking call at a time.
    private var pending: [UInt8] = []

    public init(path: String) throws {
        fd = try UnixStreamSocket.connect(path: path).releaseDescriptor()
        // A send into a server that stopped reading fails after this instead of hanging the test.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public struct Timeout: Error, CustomStringConvertible {
        public var description: String
    }

    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await offPool { [fd] in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw SystemError("send", code: errno)
                }
                offset += written
            }
        }
    }

    /// Sends one request line and reads the next line as JSON.
    public func request(_ line: String, timeout: Duration = .seconds(30)) async throws -> JSONValue {
        try await send(line + "\n")
        return try await readJSON(timeout: timeout)
    }

    public func readJSON(timeout: Duration = .seconds(30)) async throws -> JSONValue {
        guard let line = try await readLine(timeout: timeout) else { throw Timeout(description: "connection closed before a reply") }
        return try JSONValue.parse(line)
    }

    /// The next line, or nil at end of input; throws at the deadline.
    public func readLine(timeout: Duration = .seconds(30)) async throws -> String? {
        try await offPool { try self.blockingReadLine(timeout: timeout) }
    }

    /// Waits for the server to close the connection, discarding what it sends until then.
    public func waitForClose(timeout: Duration = .seconds(30)) async throws {
        while try await readLine(timeout: timeout) != nil {}
    }

    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Leaves as a process that exits does: the server sees both directions end.
    public func shutdownBoth() { shutdown(fd, Int32(SHUT_RDWR)) }

    private func blockingReadLine(timeout: Duration) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw Timeout(description: "no line within \(timeout); have \(pending.count) bytes") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let millis = Int32(max(1, min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 60_000)))
            let ready = poll(&poller, 1, millis)
            if ready < 0, errno != EINTR { throw SystemError("poll", code: errno) }
            guard ready > 0 else { continue }
            let count = read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw SystemError("read", code: errno)
            }
            if count == 0 { return nil }
            pending.append(contentsOf: chunk[..<count])
        }
    }
}

/// Runs a blocking call (a child's exit, a socket read) on a thread of its own. Blocking the
/// cooperative pool instead would starve the server under test, whose sessions run there: two
/// such waits on two cores and nothing answers until they time out.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
