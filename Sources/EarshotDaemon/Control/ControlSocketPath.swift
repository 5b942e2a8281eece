import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the control socket lives: `$XDG_RUNTIME_DIR/earshot/control`, the per-user runtime
/// directory systemd-logind makes (mode 0700, removed at logout), so the socket never outlives
/// the session nor is reachable by other users.
public enum ControlSocketPath {
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        return runtime + "/earshot/control"
    }
}

/// Blocking connects to a Unix stream socket by path: the client's, and the server's probe for
/// a live daemon before it replaces a socket file.
public enum UnixSocketConnector {
    /// A connected, close-on-exec descriptor; throws the errno of socket() or connect().
    public static func connect(path: String) throws(UnixSocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError(path: path, errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            close(fd)
            throw UnixSocketError(path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw UnixSocketError(path: path, errno: code)
        }
        return fd
    }
}

public struct UnixSocketError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Int32

    public init(path: String, errno: Int32) {
        self.path = path
        self.errno = errno
    }

    public var description: String { "\(path): \(String(cString: strerror(errno)))" }
}
