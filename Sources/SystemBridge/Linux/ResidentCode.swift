import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The code pages a long-running process keeps mapped. A fault on a file-backed mapping maps
/// not only the page that faulted but its neighbours already in the page cache ("fault-around",
/// 64 KiB), so a process that runs a few hundred scattered functions of a large static binary
/// has most of its code segment counted in its RSS (docs/performance.md: 18 of the daemon's
/// 30 MB). `trim()` unmaps the pages of every read-only executable file mapping (they stay in
/// the page cache; the next use faults the one page back in) and turns fault-around off for
/// those mappings (`MADV_RANDOM`), so from then on the RSS counts the code the process runs.
public enum ResidentCode {
    /// What `trim()` did.
    public struct Trim: Sendable, Equatable {
        /// Mappings trimmed, and the KiB they had resident before.
        public var mappings: Int
        public var residentKiB: Int
    }

    /// Trims the executable file mappings of this process that hold no private (copied)
    /// page: never one with a page written to (text relocations, a debugger's breakpoint),
    /// whose contents `MADV_DONTNEED` would throw away. Read-only data and writable mappings
    /// are left alone (relocated data lives there). Nil when /proc/self/smaps cannot be read.
    public static func trim() -> Trim? {
        guard let smaps = try? readProcFile("/proc/self/smaps") else { return nil }
        var trim = Trim(mappings: 0, residentKiB: 0)
        for mapping in mappings(inSmaps: smaps) where mapping.isCleanExecutableFile {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            let length = Int(mapping.end - mapping.start)
            guard madvise(start, length, MADV_RANDOM) == 0, madvise(start, length, MADV_DONTNEED) == 0 else { continue }
            trim.mappings += 1
            trim.residentKiB += mapping.residentKiB
        }
        return trim
    }

    /// One mapping of /proc/PID/smaps, with the fields `trim()` decides by.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var permissions: String
        var inode: UInt64
        var path: String
        var residentKiB = 0
        var anonymousKiB = 0

        var isCleanExecutableFile: Bool {
            permissions == "r-xp" && inode != 0 && path.hasPrefix("/") && anonymousKiB == 0
        }
    }

    /// The mappings of an smaps text: a header line (`start-end perms offset dev inode path`)
    /// then `Field: value kB` lines.
    static func mappings(inSmaps text: String) -> [Mapping] {
        var result: [Mapping] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                guard !result.isEmpty, fields.count >= 2, let value = Int(fields[1]) else { continue }
                switch first {
                case "Rss:": result[result.count - 1].residentKiB = value
                case "Anonymous:": result[result.count - 1].anonymousKiB = value
                default: break
                }
                continue
            }
            let range = first.split(separator: "-")
            guard fields.count >= 5, range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                let inode = UInt64(fields[4])
            else { continue }
            let path = fields.count >= 6 ? fields[5...].joined(separator: " ") : ""
            result.append(Mapping(start: start, end: end, permissions: String(fields[1]), inode: inode, path: path))
        }
        return result
    }

    /// A /proc file read to its end (its size is not known in advance: stat says 0).
    private static func readProcFile(_ path: String) throws(SystemError) -> String {
        let descriptor = try systemCall("open", path: path) { try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) }
        defer { _ = try? descriptor.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try systemCall("read", path: path) {
                try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
