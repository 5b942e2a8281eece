import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Two connected Unix sockets of `type` (SOCK_SEQPACKET, SOCK_STREAM), close-on-exec: a
/// stand-in for a Bluetooth channel and its device.
func unixSocketPair(_ type: Int32) throws -> (FileDescriptor, FileDescriptor) {
    var ends: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { throw Errno(rawValue: errno) }
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
}

/// The inode behind a socket descriptor: its name in /proc/self/fd (`socket:[inode]`).
func socketInode(_ descriptor: FileDescriptor) throws -> UInt {
    var status = stat()
    guard fstat(descriptor.rawValue, &status) == 0 else { throw Errno(rawValue: errno) }
    return UInt(status.st_ino)
}

/// How many of this process's descriptors refer to the socket `inode`: exact even while other
/// tests open and close descriptors in parallel.
func descriptorsOpen(onSocket inode: UInt) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.count { entry in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) == "socket:[\(inode)]"
    }
}

/// The names of this process's threads now (/proc/self/task/*/comm).
func currentThreadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Sends one packet (or chunk) from the test's end, whole.
func sendRaw(_ descriptor: FileDescriptor, _ bytes: [UInt8]) throws {
    let sent = bytes.withUnsafeBytes { send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard sent == bytes.count else { throw Errno(rawValue: errno) }
}

/// One blocking read from the test's end (a packet on SOCK_SEQPACKET).
func receiveRaw(_ descriptor: FileDescriptor, maximum: Int = 65536) throws -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: maximum)
    let count = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, 0) }
    guard count >= 0 else { throw Errno(rawValue: errno) }
    return Array(buffer[..<count])
}

/// The id (/proc/self/task) of the first-born thread named `name`: the thread that named
/// itself, not one born of it later that still carries the name (a Linux thread inherits its
/// creator's: a loaded run found such a newborn after the named one had ended, issue 28).
func firstThreadID(named name: String) -> Int? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap(Int.init).filter { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) == name
    }.min()
}

/// Whether the thread with id `task` has ended, waiting up to `limit` for the kernel to say so.
/// A join returns when the thread's tid futex is cleared (in `mm_release`, early in its exit);
/// its `/proc/self/task` entry goes only when the kernel releases the task a little later, and on
/// a loaded machine that "later" was seen to be after the check (hunt run 1 of 2026-11-28). No
/// event tells of that release, so this looks again, backing off, until the limit.
func threadEnded(_ task: Int?, within limit: Duration = .seconds(10)) -> Bool {
    guard let task else { return false }
    let deadline = ContinuousClock.now + limit
    var pause = Duration.microseconds(100)
    while FileManager.default.fileExists(atPath: "/proc/self/task/\(task)") {
        guard ContinuousClock.now < deadline else { return false }
        Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
        pause = min(pause * 2, .milliseconds(50))
    }
    return true
}
