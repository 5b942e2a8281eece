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

    public static func data(_ path: String) throws(Failure) -> Data {
        if path == "-" {
            do {
                return try FileHandle.standardInput.readToEnd() ?? Data()
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
            return try handle.readToEnd() ?? Data()
        } catch {
            throw Failure(path: path, reason: reason(error))
        }
    }

    public static func text(_ path: String) throws(Failure) -> String {
        let bytes = try data(path)
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
