import AudioGraph
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file argument whole: a regular file, a pipe or FIFO (`<(pw-dump)`, `/dev/stdin`), or
/// `-` for standard input. A failure says the path and the operating system's reason
/// (`No such file or directory`, `Is a directory`, `Permission denied`), never a Cocoa code.
public enum InputFile {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot read \(path): \(reason)" }
    }

    /// The name a path is shown by (`-` is standard input).
    public static func name(_ path: String) -> String { path == "-" ? "<stdin>" : path }

    /// The bytes of `path`. With a `limit`, a file of more bytes is refused with its size (by
    /// its size when it is a regular file, without reading it; a pipe is read up to one byte
    /// past the limit), so a huge file never fills the memory.
    public static func data(_ path: String, limit: Int? = nil) throws(Failure) -> Data {
        let shown = name(path)
        let descriptor: Int32 = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(path: shown, reason: describe(errno)) }
        defer { if path != "-" { close(descriptor) } }
        var info = stat()
        if fstat(descriptor, &info) == 0 {
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR { throw Failure(path: shown, reason: describe(EISDIR)) }
            // A regular file: refused by its size, unread. A pipe or FIFO is read until its end.
            if kind == S_IFREG, let limit, info.st_size > limit {
                throw Failure(path: shown, reason: tooLarge(size: Int64(info.st_size), limit: limit))
            }
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let wanted = limit.map { min(buffer.count, $0 + 1 - data.count) } ?? buffer.count
            let count = read(descriptor, &buffer, wanted)
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: shown, reason: describe(errno))
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            // One byte past the limit: refused, whatever else there is.
            if let limit, data.count > limit { throw Failure(path: shown, reason: tooLarge(size: nil, limit: limit)) }
        }
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
        (try? FileManager.default.attributesOfItem(atPath: path)) != nil
    }

    public static func text(_ path: String, limit: Int? = nil) throws(Failure) -> String {
        let bytes = try data(path, limit: limit)
        guard let text = String(data: bytes, encoding: .utf8) else { throw Failure(path: name(path), reason: "not UTF-8 text") }
        return text
    }

    /// The errno behind a Foundation error, in the C library's words.
    static func reason(_ error: any Error) -> String { ErrorText.describe(error) }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
