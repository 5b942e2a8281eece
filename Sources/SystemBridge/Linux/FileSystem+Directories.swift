import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Creates the directory `path` and the missing ones above it, each with exactly
    /// `permissions` (set after mkdir, so the umask does not widen or narrow it). A directory
    /// already there is left as it is. A failure names `path`, whichever level of it failed
    /// (`mkdir /run/earshot: Permission denied (EACCES)`).
    public static func createDirectory(_ path: String, permissions: UInt16 = 0o700) throws(SystemError) {
        var missing: [String] = []
        var level = FilePath(path)
        do throws(SystemError) {
            while !level.components.isEmpty {
                if let found = try status(of: level.string) {
                    guard found.type == .directory else { throw SystemError("mkdir", path: level.string, errno: missing.isEmpty ? .fileExists : .notDirectory) }
                    break
                }
                missing.append(level.string)
                level = level.removingLastComponent()
            }
            for directory in missing.reversed() {
                do throws(SystemError) {
                    try retryingOnInterrupt("mkdir", path: directory) { mkdir(directory, mode_t(permissions)) }
                } catch where error.errno == .fileExists && (try? status(of: directory))?.type == .directory {
                    // Made meanwhile by someone else: there, as asked, and theirs to keep.
                    continue
                }
                try setPermissions(permissions, of: directory)
            }
        } catch {
            throw SystemError("mkdir", path: path, errno: error.errno)
        }
    }

    /// The names in the directory `path` (without `.` and `..`), in no particular order.
    public static func contentsOfDirectory(_ path: String) throws(SystemError) -> [String] {
        #if DEBUG
        if let injected = FaultInjection.failure(of: "opendir", path: path) { throw SystemError("opendir", path: path, errno: injected) }
        #endif
        guard let stream = opendir(path) else { throw SystemError("opendir", path: path, errno: .current) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            Glibc.errno = 0
            guard let entry = readdir(stream) else {
                if Glibc.errno != 0 { throw SystemError("readdir", path: path, errno: .current) }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != ".", name != ".." { names.append(name) }
        }
    }

    /// Removes `path` and, when it is a directory (not a symbolic link to one), everything in
    /// it. Returns false when nothing was there.
    @discardableResult
    public static func removeTree(_ path: String) throws(SystemError) -> Bool {
        guard let found = try entry(at: path) else { return false }
        guard found.kind == .directory else { return try remove(path) }
        for name in try contentsOfDirectory(path) { try removeTree("\(path)/\(name)") }
        try retryingOnInterrupt("rmdir", path: path) { rmdir(path) }
        return true
    }

    /// Whether anything is at `path` once symbolic links are followed (a link whose target is
    /// missing is nothing); a path that cannot be looked at counts as nothing.
    public static func exists(_ path: String) -> Bool {
        (try? status(of: path)) != nil
    }

    /// Whether this process may execute `path` (access X_OK).
    public static func isExecutable(_ path: String) -> Bool {
        access(path, X_OK) == 0
    }
}
