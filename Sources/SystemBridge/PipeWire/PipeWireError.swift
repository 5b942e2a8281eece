import AudioGraph

/// What went wrong talking to PipeWire, in words a user can act on.
public enum PipeWireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No daemon answered (`pw_context_connect` failed with this errno).
    case cannotConnect(remote: String, errno: Int32)
    /// The daemon went away (core error -EPIPE) or the connection broke.
    case disconnected(String)
    /// The daemon refused a request.
    case requestFailed(operation: String, code: Int32, message: String)
    case noSuchObject(ObjectID)
    /// The named metadata object (usually `default`) does not exist: no session manager
    /// runs and nobody created it.
    case noSuchMetadata(String)
    /// Two nodes have no pair of ports with matching channel positions.
    case noMatchingPorts(output: ObjectID, input: ObjectID)
    /// The connection was closed by its owner.
    case closed
    case timedOut(String)

    public var description: String {
        switch self {
        case .cannotConnect(let remote, let code) where code == EHOSTDOWN || code == ENOENT:
            // libpipewire reports a missing socket as EHOSTDOWN ("Host is down").
            return "cannot connect to PipeWire: no socket at \(Self.socketPath(of: remote)); is pipewire running for this user, and XDG_RUNTIME_DIR (or PIPEWIRE_RUNTIME_DIR) the one it uses?"
        case .cannotConnect(let remote, let code):
            return "cannot connect to PipeWire at \(Self.socketPath(of: remote)): \(String(cString: strerror(code)))"
        case .disconnected(let why): return "PipeWire connection lost: \(why)"
        case .requestFailed(let operation, let code, let message):
            return "PipeWire refused \(operation): \(message) (\(String(cString: strerror(-code))))"
        case .noSuchObject(let id): return "no PipeWire object with id \(id)"
        case .noSuchMetadata(let name): return "no \"\(name)\" metadata object (is a session manager such as WirePlumber running?)"
        case .noMatchingPorts(let output, let input):
            return "node \(output) has no output port whose channel matches an input port of node \(input)"
        case .closed: return "the PipeWire connection was closed"
        case .timedOut(let what): return "timed out waiting for \(what)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PipeWireError {
    /// Where libpipewire looks for a remote: an absolute path as given, otherwise the name in
    /// PIPEWIRE_RUNTIME_DIR, else XDG_RUNTIME_DIR.
    static func socketPath(of remote: String) -> String {
        if remote.hasPrefix("/") { return remote }
        let names: [String] = ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR"]
        let directory = names.compactMap { name in getenv(name).map { String(cString: $0) } }.first { !$0.isEmpty }
        return directory.map { "\($0)/\(remote)" } ?? "\(remote) (XDG_RUNTIME_DIR is not set)"
    }
}
