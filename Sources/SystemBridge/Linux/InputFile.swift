import SystemPackage

/// Reads a file argument whole: a regular file, a pipe or FIFO (`<(pw-dump)`, `/dev/stdin`), or
/// `-` for standard input. A failure says the path and the operating system's reason
/// (`No such file or directory`, `Is a directory`, `Permission denied`), never a Cocoa code.
public enum InputFile {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot read \(path): \(reason)" }

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// The name a path is shown by (`-` is standard input).
    public static func name(_ path: String) -> String { path == "-" ? "<stdin>" : path }

    /// The bytes of `path`. With a `limit`, a file of more bytes is refused with its size (by
    /// its size when it is a regular file, without reading it; a pipe is read up to one byte
    /// past the limit), so a huge file never fills the memory.
    public static func bytes(_ path: String, limit: Int? = nil) throws(Failure) -> [UInt8] {
        let shown = name(path)
        let file: ReadingFile
        do {
            file = try FileSystem.openForReading(path)
        } catch {
            throw Failure(path: shown, reason: error.errno.description)
        }
        defer { file.close() }
        if let opened = try? systemCall("fstat", path: path, { FileSystem.Status(try Stat(file.descriptor)) }) {
            if opened.type == .directory { throw Failure(path: shown, reason: Errno.isDirectory.description) }
            // A regular file: refused by its size, unread. A pipe or FIFO is read until its end.
            if opened.type == .regular, let limit, opened.size > limit {
                throw Failure(path: shown, reason: tooLarge(size: opened.size, limit: limit))
            }
        }
        var bytes: [UInt8] = []
        while true {
            let wanted = limit.map { min(65536, $0 + 1 - bytes.count) } ?? 65536
            let chunk: [UInt8]
            do {
                chunk = try file.read(maximum: wanted)
            } catch {
                throw Failure(path: shown, reason: error.errno.description)
            }
            if chunk.isEmpty { return bytes }
            bytes += chunk
            // One byte past the limit: refused, whatever else there is.
            if let limit, bytes.count > limit { throw Failure(path: shown, reason: tooLarge(size: nil, limit: limit)) }
        }
    }

    /// The text of `path`, UTF-8; a leading byte order mark is dropped (as Foundation's
    /// `String(data:encoding:)` drops it, which read these files before).
    public static func text(_ path: String, limit: Int? = nil) throws(Failure) -> String {
        let read = try bytes(path, limit: limit)
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let body = read.starts(with: byteOrderMark) ? read.dropFirst(byteOrderMark.count) : read[...]
        guard let text = String(validating: body, as: UTF8.self) else { throw Failure(path: name(path), reason: "not UTF-8 text") }
        return text
    }

    /// Why a file over `limit` bytes is refused: `it is 1073741824 bytes, over the limit of
    /// 16 MiB`; for a stream, whose size is not known, `it has more than 16 MiB, the limit`.
    public static func tooLarge(size: Int64?, limit: Int) -> String {
        let mebibyte = 1 << 20
        let limitText = limit % mebibyte == 0 ? "\(limit / mebibyte) MiB" : "\(limit) bytes"
        guard let size else { return "it has more than \(limitText), the limit" }
        return "it is \(size) bytes, over the limit of \(limitText)"
    }

    /// Whether anything is at `path` itself (lstat): a symbolic link counts even when its
    /// target is missing or it loops, so a config search stops at it and reports it, rather
    /// than passing over the user's file to the next one.
    public static func nameExists(_ path: String) -> Bool {
        (try? FileSystem.entry(at: path)) != nil
    }
}
