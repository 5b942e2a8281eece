import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (flock) on a file, held as long as this value lives: one
/// process per lock file. The kernel lets go when the process ends, however it ends, so a
/// crashed holder never leaves a stale lock behind.
public final class InstanceLock: Sendable {
    public let path: String
    private let descriptor: FileDescriptor

    private init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        _ = try? descriptor.close()
    }

    /// Takes the lock, creating the file (0600) and its directory (0700) when missing.
    /// Returns nil when another process holds it.
    public static func acquire(path: String) throws(SystemError) -> InstanceLock? {
        let directory = PathParts(path).directory
        if !directory.isEmpty, try FileSystem.entry(at: directory) == nil {
            try retryingOnInterrupt("mkdir", path: directory) { mkdir(directory, 0o700) }
        }
        let file = try systemCall("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readWrite, options: [.create, .closeOnExec], permissions: [.ownerReadWrite])
        }
        while flock(file.rawValue, LOCK_EX | LOCK_NB) != 0 {
            let error = Errno.current
            if error == .interrupted { continue }
            _ = try? file.close()
            if error == .wouldBlock { return nil }
            throw SystemError("flock", path: path, errno: error)
        }
        return InstanceLock(path: path, descriptor: file)
    }
}

/// The directory part of a path, without Foundation.
private struct PathParts {
    let path: String
    init(_ path: String) { self.path = path }
    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
