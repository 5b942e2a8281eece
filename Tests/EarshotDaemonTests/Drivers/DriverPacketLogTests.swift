import WireFields
import AccessoryDrivers
import EarshotDaemon
import Foundation
import RoutingPolicy
import Synchronization
import SystemBridge
import SystemPackage
import TestScheduling
import Testing

@Suite("Driver packet log", .blockingCalls)
struct DriverPacketLogTests {
    static let device = PacketLogLine.Device(address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, family: .aap)

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-packets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    final class Problems: Sendable {
        let reported = Mutex<[String]>([])
        var all: [String] { reported.withLock { $0 } }
        func report(_ text: String) { reported.withLock { $0.append(text) } }
    }

    @Test("lines are the documented format, the file is 0600 and appended to, and decode reads it back")
    func writesLines() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/packets.log"
        let problems = Problems()
        let log = DriverPacketLog(path: path, problem: problems.report, clock: { 1_795_388_645_123 })
        log.record(.sent, AAPPacket.requestNotifications, device: Self.device)
        log.record(.received, AAPPacket.earDetection(primary: .inEar, secondary: .outOfEar), device: Self.device)
        log.close()
        log.record(.received, [0x01], device: Self.device)  // after close: dropped
        #expect(Self.lines(path) == [
            "AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.123Z > 04 00 04 00 0F 00 FF FF FF FF",
            "AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.123Z < 04 00 04 00 06 00 00 01",
        ])
        #expect(try FileSystem.entry(at: path)?.permissions == 0o600)
        // A second log on the same file appends; an existing file's mode is narrowed to 0600.
        try FileSystem.setPermissions(0o644, of: path)
        let again = DriverPacketLog(path: path, problem: problems.report, clock: { 0 })
        again.record(PacketLogLine(bytes: [0xAB]))
        again.close()
        #expect(Self.lines(path).count == 3)
        #expect(Self.lines(path).last == "AB")
        #expect(try FileSystem.entry(at: path)?.permissions == 0o600)
        #expect(problems.all.isEmpty)
        for line in Self.lines(path) {
            guard case .success = PacketLogLine.parse(line) else { Issue.record("unparsable: \(line)"); continue }
        }
    }

    @Test("past the cap the file moves to FILE.1 (replacing an older one) and a new one starts")
    func rotates() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/packets.log"
        // "AB CD\n" is 6 bytes: two lines fit a 12-byte cap, the third rotates.
        let log = DriverPacketLog(path: path, cap: 12, problem: { Issue.record("problem: \($0)") })
        for byte in UInt8(1)...UInt8(7) { log.record(PacketLogLine(bytes: [byte, 0xCD])) }
        log.close()
        #expect(Self.lines(path) == ["07 CD"])
        #expect(Self.lines(path + ".1") == ["05 CD", "06 CD"])
        #expect(!FileManager.default.fileExists(atPath: path + ".2"))
        #expect(try FileSystem.entry(at: path + ".1")?.permissions == 0o600)
        // A line longer than the cap is still written, alone in its file.
        let big = DriverPacketLog(path: path, cap: 4, problem: { Issue.record("problem: \($0)") })
        big.record(PacketLogLine(bytes: [1, 2, 3]))
        big.close()
        #expect(Self.lines(path) == ["01 02 03"])
        #expect(Self.lines(path + ".1") == ["07 CD"])
    }

    @Test("a log that cannot be written says so once, then drops lines")
    func unwritableReportedOnce() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A regular file where the directory should be: not writable, even for root.
        #expect(FileManager.default.createFile(atPath: directory + "/not-a-directory", contents: Data()))
        let problems = Problems()
        let log = DriverPacketLog(path: directory + "/not-a-directory/packets.log", problem: problems.report)
        for _ in 0..<3 { log.record(.received, [0x01], device: Self.device) }
        #expect(problems.all.count == 1)
        #expect(problems.all.first?.contains("not-a-directory/packets.log") == true)
        #expect(problems.all.first?.contains("ENOTDIR") == true)
    }

    @Test("a read-only directory is reported once (skipped as root, who may write anyway)")
    func readOnlyDirectory() throws {
        guard CurrentProcess.userID != 0 else { return }
        let directory = try Self.directory()
        defer {
            try? FileSystem.setPermissions(0o700, of: directory)
            try? FileManager.default.removeItem(atPath: directory)
        }
        try FileSystem.setPermissions(0o500, of: directory)
        let problems = Problems()
        let log = DriverPacketLog(path: directory + "/packets.log", problem: problems.report)
        for _ in 0..<3 { log.record(.received, [0x01], device: Self.device) }
        #expect(problems.all.count == 1)
        #expect(problems.all.first?.contains("EACCES") == true)
    }

    #if DEBUG  // FaultInjection exists in debug builds only (the tests').
    /// A clock a test moves (ms).
    final class ManualClock: Sendable {
        let now = Mutex<Int64>(1_795_388_645_123)
        func advance(by milliseconds: Int64) { now.withLock { $0 += milliseconds } }
        var read: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
    }

    /// A log in a fresh directory on a clock the test moves, telling what it says.
    static func loggedOnManualClock() throws -> (log: DriverPacketLog, directory: String, path: String, problems: Problems, resumed: Problems, clock: ManualClock) {
        let directory = try Self.directory()
        let path = directory + "/packets.log"
        let (problems, resumed, clock) = (Problems(), Problems(), ManualClock())
        let log = DriverPacketLog(path: path, problem: problems.report, resumed: resumed.report, clock: clock.read)
        return (log, directory, path, problems, resumed, clock)
    }

    @Test("a disk that fills up mid-log (ENOSPC at write, injected): said once with the path and errno, the lines before stay whole; lines are dropped, retried after a minute, then after two, four…; writing again is said with the count dropped")
    func diskFillsUp() throws {
        let (log, directory, path, problems, resumed, clock) = try Self.loggedOnManualClock()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        log.record(.received, [0x01, 0x02], device: Self.device)
        let token = FaultInjection.inject(.noSpace, into: "write", onPathsContaining: directory)
        defer { FaultInjection.remove(token) }
        for _ in 0..<5 { log.record(.received, [0x03], device: Self.device) }
        #expect(problems.all == [
            "packet log \(path): write \(path): No space left on device (ENOSPC); lines are dropped and writing is tried again in a minute (then less often, at most hourly)"
        ])
        // Still full a minute later: tried once more, failed without a word; the next try waits
        // two minutes.
        clock.advance(by: 60_000)
        log.record(.received, [0x04], device: Self.device)
        clock.advance(by: 60_000)
        log.record(.received, [0x05], device: Self.device)
        #expect(problems.all.count == 1, "\(problems.all)")
        // Space again: the try after the two minutes writes.
        FaultInjection.remove(token)
        clock.advance(by: 60_000)
        log.record(.received, [0x06], device: Self.device)
        #expect(resumed.all == ["packet log \(path): writing again (7 line(s) dropped)"], "\(resumed.all)")
        // The line after the failure starts on a line of its own (a write that failed may have
        // left part of one; the blank line this leaves is skipped by decode).
        let lines = Self.lines(path)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasSuffix(" 01 02") == true && lines.last?.hasSuffix(" 06") == true, "\(lines)")
        #expect(problems.all.count == 1)
    }

    @Test("a clock set back after a failure (before the failure's own time) makes the retry due at once, not after the jump")
    func clockSetBack() throws {
        let (log, directory, path, problems, resumed, clock) = try Self.loggedOnManualClock()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token = FaultInjection.inject(.noSpace, into: "write", onPathsContaining: directory, times: 1)
        defer { FaultInjection.remove(token) }
        log.record(.received, [0x01], device: Self.device)
        #expect(problems.all.count == 1)
        clock.advance(by: -86_400_000)  // a day back: NTP, a wrong RTC, a user
        log.record(.received, [0x02], device: Self.device)
        #expect(resumed.all.count == 1, "\(resumed.all)")
        #expect(Self.lines(path).last?.hasSuffix(" 02") == true, "\(Self.lines(path))")
    }

    @Test("a read-only file system (EROFS at open, injected, so also as root): reported once, nothing written")
    func readOnlyFileSystem() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token = FaultInjection.inject(.readOnlyFileSystem, into: "open", onPathsContaining: directory)
        defer { FaultInjection.remove(token) }
        let problems = Problems()
        let log = DriverPacketLog(path: directory + "/packets.log", problem: problems.report)
        for _ in 0..<3 { log.record(.received, [0x01], device: Self.device) }
        #expect(problems.all.count == 1)
        #expect(problems.all.first?.contains("open \(directory)/packets.log: Read-only file system (EROFS)") == true, "\(problems.all)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/packets.log"))
    }
    #endif

    @Test("lines from many threads are whole and all there")
    func concurrentWriters() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/packets.log"
        let log = DriverPacketLog(path: path, problem: { Issue.record("problem: \($0)") })
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<50 { log.record(PacketLogLine(bytes: [UInt8(writer), UInt8(index), 0xEE])) }
                }
            }
        }
        log.close()
        let lines = Self.lines(path)
        #expect(lines.count == 200)
        #expect(lines.allSatisfy { $0.count == 8 && $0.hasSuffix(" EE") })
    }
}
