import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// What a path names once symbolic links are followed (`stat`), as the checks before a read
    /// or a use need it.
    public struct Status: Sendable, Equatable {
        public var type: FileType
        public var identity: Identity
        /// The owner's user id.
        public var owner: UInt32
        /// The permission bits, set-id and sticky bits included (0o1777 for /tmp).
        public var permissions: UInt16
        /// The size in bytes (meaningful for a regular file).
        public var size: Int64

        public init(type: FileType, identity: Identity, owner: UInt32, permissions: UInt16, size: Int64) {
            self.type = type
            self.identity = identity
            self.owner = owner
            self.permissions = permissions
            self.size = size
        }
    }

    /// The type of a file, named as a message names it.
    public enum FileType: Sendable, Equatable, CustomStringConvertible {
        case regular, directory, fifo, characterDevice, blockDevice, socket, symbolicLink, unknown

        public var description: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .fifo: "a FIFO (named pipe)"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .socket: "a socket"
            case .symbolicLink: "a symbolic link"
            case .unknown: "not a regular file"
            }
        }

        init(_ type: SystemPackage.FileType) {
            self =
                switch type {
                case .regular: .regular
                case .directory: .directory
                case .fifo: .fifo
                case .characterSpecial: .characterDevice
                case .blockSpecial: .blockDevice
                case .socket: .socket
                case .symbolicLink: .symbolicLink
                default: .unknown
                }
        }
    }

    /// What `path` names once symbolic links are followed (stat); nil when nothing is there
    /// (also a symbolic link whose target is missing: `entry(at:)` tells that one apart).
    /// Never opens the file, so it never blocks on a FIFO.
    public static func status(of path: String) throws(SystemError) -> Status? {
        do {
            return Status(try Stat(FilePath(path)))
        } catch where error == .noSuchFileOrDirectory {
            return nil
        } catch {
            throw SystemError("stat", path: path, errno: error)
        }
    }

    /// Why a file was not read.
    public enum ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A call failed: which, where, and the errno.
        case system(SystemError)
        /// Not a regular file (a FIFO, a device, a directory, a socket): refused before it was
        /// opened.
        case notRegular(path: String, type: FileType)
        /// More than `limit` bytes: `size` is the file's size, or nil for a stream (all that is
        /// known is that more than `limit` bytes came).
        case tooLarge(path: String, size: Int64?, limit: Int)

        public var path: String {
            switch self {
            case .system(let error): error.path ?? ""
            case .notRegular(let path, _), .tooLarge(let path, _, _): path
            }
        }

        /// Why, without the path, in the system's words where it has some: `No such file or
        /// directory`, `Is a directory`, `it is a FIFO (named pipe), not a regular file`, `it is
        /// 1073741824 bytes, over the limit of 16777216`.
        public var reason: String {
            switch self {
            case .system(let error): error.errno.description
            case .notRegular(_, .directory): Errno.isDirectory.description
            case .notRegular(_, let type): "it is \(type), not a regular file"
            case .tooLarge(_, let size?, let limit): "it is \(size) bytes, over the limit of \(limit)"
            case .tooLarge(_, nil, let limit): "it has more than \(limit) bytes, the limit"
            }
        }

        public var description: String {
            switch self {
            case .system(let error): error.description
            default: "\(path): \(reason)"
            }
        }
    }

    /// Reads the regular file at `path` whole without ever blocking or touching anything that
    /// is not a regular file: `stat` first (a FIFO, a device, a socket or a directory is refused
    /// before it is opened, so a FIFO cannot hold the caller until someone writes to it), then
    /// `open` with O_NONBLOCK and O_NOCTTY and `fstat` again (the name may have been replaced in
    /// between: what was opened is checked, not what the name said). A file over `limit` bytes
    /// is refused by its size, without reading it; at most `limit` bytes are ever read (a file
    /// that grows meanwhile is refused as too large). Symbolic links are followed.
    public static func readRegularFile(_ path: String, limit: Int) throws(ReadError) -> [UInt8] {
        let named: Status?
        do {
            named = try status(of: path)
        } catch {
            throw .system(error)
        }
        guard let named else { throw .system(SystemError("stat", path: path, errno: .noSuchFileOrDirectory)) }
        try check(named, path: path, limit: limit)
        let file: FileDescriptor
        do {
            file = try systemCall("open", path: path) {
                try FileDescriptor.open(
                    FilePath(path), .readOnly,
                    options: [.nonBlocking, .closeOnExec, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
            }
        } catch {
            throw .system(error)
        }
        defer { _ = try? file.close() }
        let opened: Status
        do {
            opened = try systemCall("fstat", path: path) { Status(try Stat(file)) }
        } catch {
            throw .system(error)
        }
        try check(opened, path: path, limit: limit)
        return try readAll(file.rawValue, path: path, limit: limit, expected: Int(opened.size))
    }

    /// Reads a stream whole: a pipe, a FIFO, a device, or `-` (the standard input), blocking
    /// until its writer closes it. At most `limit` bytes are read: a stream that has more is
    /// refused as too large. For a file that was passed on purpose (`--config <(…)`); a file
    /// met by searching is read with `readRegularFile`.
    public static func readStream(_ path: String, limit: Int) throws(ReadError) -> [UInt8] {
        let file: ReadingFile
        do {
            file = try openForReading(path)
        } catch {
            throw .system(error)
        }
        defer { file.close() }
        return try readAll(file.descriptor.rawValue, path: file.path, limit: limit, expected: 0)
    }

    /// The bytes of the file at `path`, read whole (a file of the daemon's own, which it
    /// trusts: no size limit, no check of its type); nil when nothing is there.
    public static func contents(of path: String) throws(SystemError) -> [UInt8]? {
        let file: ReadingFile
        do {
            file = try openForReading(path)
        } catch where error.errno == .noSuchFileOrDirectory {
            return nil
        }
        defer { file.close() }
        var bytes: [UInt8] = []
        while true {
            let chunk = try file.read()
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }

    private static func check(_ status: Status, path: String, limit: Int) throws(ReadError) {
        guard status.type == .regular else { throw .notRegular(path: path, type: status.type) }
        guard status.size <= Int64(limit) else { throw .tooLarge(path: path, size: status.size, limit: limit) }
    }

    /// Reads until the end, refusing more than `limit` bytes.
    private static func readAll(_ descriptor: Int32, path: String, limit: Int, expected: Int) throws(ReadError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(max(expected, 0), limit) + 1)
        while true {
            // One byte past the limit tells "exactly the limit" from "more".
            let chunk: [UInt8]
            do {
                chunk = try Readiness.read(descriptor, maximum: min(65536, limit + 1 - bytes.count), what: path)
            } catch {
                throw .system(error)
            }
            if chunk.isEmpty { return bytes }
            bytes += chunk
            if bytes.count > limit { throw .tooLarge(path: path, size: nil, limit: limit) }
        }
    }
}

extension FileSystem.Status {
    init(_ stat: Stat) {
        self.init(
            type: FileSystem.FileType(stat.type),
            identity: FileSystem.Identity(device: UInt64(stat.deviceID.rawValue), inode: UInt64(stat.inode.rawValue)),
            owner: UInt32(stat.userID.rawValue),
            permissions: UInt16(stat.mode.rawValue & 0o7777),
            size: stat.size)
    }
}
