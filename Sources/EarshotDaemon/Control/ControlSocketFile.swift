import WireFields
import ControlProtocol
import FoundationEssentials
import SystemBridge
import SystemPackage
import AudioGraph

/// The file-system side of the control socket: its directory, a socket file left behind by a
/// daemon that died, and the mode of a fresh one.
enum ControlSocketFile {
    /// Creates the socket's directory (and missing parents) with mode 0700. An existing
    /// directory is left as it is: `--socket` may name one the user shares on purpose (and
    /// the socket itself is 0600 and checks the peer's uid anyway).
    static func prepareDirectory(for path: String) throws(ControlServerError) {
        let directory = FilePath(path).removingLastComponent().string
        guard !directory.isEmpty else { return }
        if let entry = try? FileSystem.entry(at: directory) {
            guard entry.kind == .directory else { throw .directory(directory, "exists and is not a directory") }
            return
        }
        do {
            try FileSystem.createDirectory(directory, permissions: 0o700)
        } catch {
            throw .directory(directory, "cannot create it: \(error.errno.description)")
        }
    }

    /// Removes a socket file nobody listens on; refuses when a daemon answers there, or when
    /// the path is something other than a socket.
    static func clearStale(at path: String) throws(ControlServerError) {
        let entry: FileSystem.Entry?
        do {
            entry = try FileSystem.entry(at: path)
        } catch {
            throw .socket(path, "cannot look at it: \(error.reason)")
        }
        guard let entry else { return }
        guard entry.kind == .socket else { throw .notASocket(path) }
        do {
            _ = try UnixStreamSocket.connect(path: path)  // closed again at once
            throw ControlServerError.alreadyServing(path)
        } catch let error as SystemError where error.errno == .connectionRefused || error.errno == .noSuchFileOrDirectory {
            // ECONNREFUSED: nobody listens, the daemon that made it is gone.
            do {
                try FileSystem.remove(path)
            } catch {
                throw .socket(path, "cannot remove the stale socket: \(error.reason)")
            }
        } catch let error as ControlServerError {
            throw error
        } catch {
            throw .socket(path, "cannot tell whether a daemon listens there: \(error)")
        }
    }

    /// The socket's identity after bind, so close removes only the file this server made.
    static func identity(of path: String) -> FileSystem.Identity? {
        (try? FileSystem.entry(at: path))??.identity
    }

    static func restrictToOwner(_ path: String) throws(ControlServerError) {
        do {
            try FileSystem.setPermissions(0o600, of: path)
        } catch {
            throw .socket(path, "cannot set mode 0600: \(error.reason)")
        }
    }

    static func remove(_ path: String, ifStill identity: FileSystem.Identity?) {
        guard let identity, let now = self.identity(of: path), now == identity else { return }
        _ = try? FileSystem.remove(path)
    }
}

/// Why the control server did not start.
public enum ControlServerError: Error, Sendable, CustomStringConvertible {
    case alreadyServing(String)
    case notASocket(String)
    case directory(String, String)
    case socket(String, String)

    public var description: String {
        switch self {
        case .alreadyServing(let path):
            "another earshot daemon is listening on \(path): stop it first (earshot status shows it), or give this one another socket path"
        case .notASocket(let path):
            "\(path) exists and is not a socket: move it away, or give another socket path"
        case .directory(let path, let why):
            "control socket directory \(path) \(why)"
        case .socket(let path, let why):
            "control socket \(path): \(why)"
        }
    }
}
