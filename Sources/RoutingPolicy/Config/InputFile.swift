import Foundation
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
        if path == "-" {
            do {
                return try read(FileHandle.standardInput, limit: limit, path: name(path))
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(path: name(path), reason: reason(error))
            }
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw Failure(path: path, reason: describe(EISDIR))
        }
        do {
            // FileHandle reads until the end, so pipes and FIFOs work (Data(contentsOf:) does not).
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            if let limit, let size = try? handle.seekToEnd() {
                // A regular file (a pipe cannot seek): refused by its size, unread.
                guard size <= UInt64(limit) else { throw Failure(path: path, reason: tooLarge(size: Int64(clamping: size), limit: limit)) }
                try handle.seek(toOffset: 0)
            }
            return try read(handle, limit: limit, path: path)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(path: path, reason: reason(error))
        }
    }

    /// Until the end, or one byte past `limit` (refused).
    private static func read(_ handle: FileHandle, limit: Int?, path: String) throws -> Data {
        guard let limit else { return try handle.readToEnd() ?? Data() }
        var data = Data()
        while let chunk = try handle.read(upToCount: min(65536, limit + 1 - data.count)), !chunk.isEmpty {
            data.append(chunk)
            if data.count > limit { throw Failure(path: path, reason: tooLarge(size: nil, limit: limit)) }
        }
        return data
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
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        var current: NSError? = error
        while let candidate = current {
            if candidate.domain == NSPOSIXErrorDomain { return describe(Int32(candidate.code)) }
            current = candidate.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        if error.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: error.code) {
            case .fileReadNoSuchFile, .fileNoSuchFile: return describe(ENOENT)
            case .fileReadNoPermission: return describe(EACCES)
            default: break
            }
        }
        return error.localizedDescription
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
