#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What went wrong on D-Bus, in words a user can act on.
public enum DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Opening or starting the bus connection failed (errno).
    case cannotConnect(bus: String, errno: Int32)
    /// An sd-bus call failed (negative errno), e.g. a malformed message or a full queue.
    case failed(operation: String, errno: Int32)
    /// The peer answered a method call with a D-Bus error.
    case remote(name: String, message: String)
    /// The well-known name is owned by another connection.
    case nameTaken(String)
    /// The connection broke or was closed.
    case disconnected

    public var description: String {
        switch self {
        case .cannotConnect(let bus, let code):
            return "cannot connect to the \(bus) bus: \(String(cString: strerror(code)))"
        case .failed(let operation, let code):
            return "D-Bus \(operation) failed: \(String(cString: strerror(code)))"
        case .remote(let name, let message): return "\(name): \(message)"
        case .nameTaken(let name): return "the D-Bus name \(name) is owned by another process (is another earshot daemon running?)"
        case .disconnected: return "the D-Bus connection was closed"
        }
    }
}
