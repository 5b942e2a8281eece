import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Opens `path` for appending (created with `permissions` if missing; an existing file
    /// keeps its contents and is set to `permissions`). A symbolic link at `path` is refused
    /// (O_NOFOLLOW), so a planted link cannot redirect the writes.
    public static func openForAppending(_ path: String, permissions: UInt16 = 0o600) throws(SystemError) -> AppendingFile {
        let file = try systemCall("open", path: path) {
            try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .append, .noFollow, .closeOnExec],
                permissions: FilePermissions(rawValue: mode_t(permissions)))
        }
        do throws(SystemError) {
            try retryingOnInterrupt("fchmod", path: path) { fchmod(file.rawValue, mode_t(permissions)) }
            let size = try systemCall("lseek", path: path) { try file.seek(offset: 0, from: .end) }
            return AppendingFile(descriptor: file, path: path, size: Int(size))
        } catch {
            _ = try? file.close()
            throw error
        }
    }

    /// Opens `path` for reading (`-` is the standard input, which `ReadingFile.close` leaves open).
    public static func openForReading(_ path: String) throws(SystemError) -> ReadingFile {
        if path == "-" { return ReadingFile(descriptor: .standardInput, path: "<stdin>", owned: false) }
        let file = try systemCall("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        }
        return ReadingFile(descriptor: file, path: path, owned: true)
    }
}

/// A file open for appending; plain `write`s, no fsync. Not thread-safe: its owner serialises.
public struct AppendingFile: Sendable {
    let descriptor: FileDescriptor
    public let path: String
    /// The file's size when opened plus everything written since.
    public private(set) var size: Int

    init(descriptor: FileDescriptor, path: String, size: Int) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
    }

    /// Writes all of `bytes` (retrying short writes and interruptions).
    public mutating func write(_ bytes: [UInt8]) throws(SystemError) {
        let written = try systemCall("write", path: path) { try descriptor.writeAll(bytes) }
        size += written
    }

    public func close() throws(SystemError) {
        try systemCall("close", path: path) { try descriptor.close() }
    }
}

/// A file or the standard input, read in chunks.
public struct ReadingFile: Sendable {
    let descriptor: FileDescriptor
    /// The path as given (`<stdin>` for `-`).
    public let path: String
    let owned: Bool

    /// Up to `maximum` bytes (retrying interruptions); empty at the end.
    public func read(maximum: Int = 65536) throws(SystemError) -> [UInt8] {
        try Readiness.read(descriptor.rawValue, maximum: maximum, what: path)
    }

    /// Closes the file (not the standard input).
    public func close() {
        if owned { _ = try? descriptor.close() }
    }
}
