import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The file-system calls the daemon makes, each throwing a `SystemError` that names the path
/// and the errno. Paths are plain strings, as the daemon's options and config carry them.
public enum FileSystem {
    /// What a path names, without following a symbolic link.
    public enum Kind: Sendable, Equatable {
        case regular, directory, socket, symbolicLink, other
    }

    /// The device and inode of a file: whether a path still names the file it named before.
    public struct Identity: Sendable, Hashable {
        public var device: UInt64
        public var inode: UInt64

        public init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }
    }

    /// What `lstat` (or `stat`) says about a path.
    public struct Entry: Sendable, Equatable {
        public var kind: Kind
        public var identity: Identity
        /// The permission bits (0o600…).
        public var permissions: UInt16
        /// The owner's user and group ids.
        public var owner: UInt32 = 0
        public var group: UInt32 = 0
    }

    /// What is at `path` itself (lstat: a symbolic link is not followed; with
    /// `followingSymbolicLinks`, stat: what it points to); nil when nothing is.
    public static func entry(at path: String, followingSymbolicLinks: Bool = false) throws(SystemError) -> Entry? {
        let status: Stat
        do {
            status = try Stat(FilePath(path), followTargetSymlink: followingSymbolicLinks)
        } catch where error == .noSuchFileOrDirectory {
            return nil
        } catch {
            throw SystemError(followingSymbolicLinks ? "stat" : "lstat", path: path, errno: error)
        }
        let kind: Kind =
            switch status.type {
            case .regular: .regular
            case .directory: .directory
            case .socket: .socket
            case .symbolicLink: .symbolicLink
            default: .other
            }
        return Entry(
            kind: kind,
            identity: Identity(device: UInt64(status.deviceID.rawValue), inode: UInt64(status.inode.rawValue)),
            permissions: UInt16(status.permissions.rawValue), owner: UInt32(status.userID.rawValue),
            group: UInt32(status.groupID.rawValue))
    }

    /// Removes the name `path` (unlink). Returns false when nothing was there.
    @discardableResult
    public static func remove(_ path: String) throws(SystemError) -> Bool {
        guard unlink(path) != 0 else { return true }
        let error = Errno.current
        if error == .noSuchFileOrDirectory { return false }
        throw SystemError("unlink", path: path, errno: error)
    }

    /// Sets the permission bits of `path` (chmod), e.g. 0o600.
    public static func setPermissions(_ permissions: UInt16, of path: String) throws(SystemError) {
        try retryingOnInterrupt("chmod", path: path) { chmod(path, mode_t(permissions)) }
    }

    /// Renames `source` to `destination` in one step, replacing what `destination` named.
    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        #if DEBUG
        if let injected = FaultInjection.failure(of: "rename", path: destination) {
            throw SystemError("rename", path: destination, detail: "from \(source)", errno: injected)
        }
        #endif
        guard Glibc.rename(source, destination) == 0 else {
            throw SystemError("rename", path: destination, detail: "from \(source)", errno: .current)
        }
    }

    /// Gives the file at `source` a second name, `destination`, which must not exist (EEXIST
    /// when it does): a move into place that never replaces what someone else put there.
    public static func link(_ source: String, to destination: String) throws(SystemError) {
        #if DEBUG
        if let injected = FaultInjection.failure(of: "link", path: destination) {
            throw SystemError("link", path: destination, detail: "from \(source)", errno: injected)
        }
        #endif
        guard Glibc.link(source, destination) == 0 else {
            throw SystemError("link", path: destination, detail: "from \(source)", errno: .current)
        }
    }

    /// Replaces the file at `path` with `bytes` so that a crash at any moment leaves either the
    /// old file or the new one, never a mix: the bytes go to a fresh temporary file in the same
    /// directory (mode `permissions`), are flushed to disk (fsync), and the temporary is renamed
    /// over `path`; the directory is flushed too, so the rename itself survives a crash. On any
    /// failure the temporary is removed and `path` is untouched.
    public static func atomicWrite(_ bytes: some Sequence<UInt8>, to path: String, permissions: UInt16 = 0o600) throws(SystemError) {
        let temporary = "\(path).tmp-\(getpid())"
        // A temporary left by a crash of a process that had this pid: O_EXCL below must not
        // meet it (O_EXCL also refuses to follow a symbolic link planted there).
        try remove(temporary)
        let file = try systemCall("open", path: temporary) {
            try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: FilePermissions(rawValue: mode_t(permissions)))
        }
        do throws(SystemError) {
            do throws(SystemError) {
                _ = try systemCall("write", path: temporary) { try file.writeAll(bytes) }
                try retryingOnInterrupt("fsync", path: temporary) { fsync(file.rawValue) }
            } catch {
                _ = try? file.close()
                throw error
            }
            try systemCall("close", path: temporary) { try file.close() }
            try rename(temporary, to: path)
        } catch {
            _ = try? remove(temporary)
            throw error
        }
        try syncDirectory(containing: path)
    }

    /// fsync on the directory that holds `path`: makes a rename or unlink in it durable.
    static func syncDirectory(containing path: String) throws(SystemError) {
        let directory = FilePath(path).removingLastComponent()
        let name = directory.isEmpty ? "." : directory.string
        let handle = try systemCall("open", path: name) {
            try FileDescriptor.open(FilePath(name), .readOnly, options: [.directory, .closeOnExec])
        }
        defer { _ = try? handle.close() }
        try retryingOnInterrupt("fsync", path: name) { fsync(handle.rawValue) }
    }
}
