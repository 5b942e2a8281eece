// FaultInjection exists in debug builds only (the tests').
#if DEBUG
import WireFields
import ControlProtocol
import Foundation
import SystemBridge
import SystemPackage
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The rolling recording on a disk that fails under it (FaultInjection: the disk is not staged).
@Suite("Rolling recording failures", .blockingCalls)
struct RollingRecordingFailureTests {
    /// The segment directories under `directory`.
    static func segments(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Where the rolling recording of `h`'s daemon goes (a fault can name it before it starts).
    static func directory(_ h: DaemonHarness) -> String { h.directory.appendingPathComponent("recordings").path }

    /// A rolling recording over `h`'s daemon, running from the first graph on.
    static func start(_ h: DaemonHarness, segmentLength: Duration = RollingRecording.segmentLength) async -> (RollingRecording, CapturedLog) {
        let log = CapturedLog()
        let recording = RollingRecording(directory: directory(h), daemon: h.daemon, logger: log.logger, segmentLength: segmentLength)
        await recording.apply(keepHours: 1)
        await h.connect(DaemonHarness.graph(sessionManager: true))
        return (recording, log)
    }

    /// The daemon stopped (its recordings end) and the recording's last lines on disk.
    static func finish(_ h: DaemonHarness, _ recording: RollingRecording) async {
        await h.daemon.stop()
        await h.consumer.value
        await recording.stop()
    }

    @Test("a full disk (ENOSPC at every write): the segment stops, said once; no new segment per input, no warning per input")
    func diskFull() async throws {
        let h = try await DaemonHarness()
        let directory = Self.directory(h)
        let token = FaultInjection.inject(.noSpace, into: "write", onPathsContaining: directory)
        defer { FaultInjection.remove(token) }
        let (recording, log) = await Self.start(h)
        for index in 0..<40 { await h.place(index % 2 == 0 ? "on-head" : "off-head", register: index == 0) }
        await h.settle()
        await Self.finish(h, recording)
        let warnings = log.all.filter { $0.hasPrefix("warning") }
        #expect(Self.segments(directory).count <= 1, "\(Self.segments(directory))")
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("No space left on device (ENOSPC)") == true, "\(warnings)")
        await h.stop()
    }

    @Test("a segment that cannot start (EIO writing its graph, once): said once, its hour's inputs go by; the next segment records again and says so")
    func startFailsThenRecovers() async throws {
        let h = try await DaemonHarness()
        let directory = Self.directory(h)
        FaultInjection.inject(.ioError, into: "write", onPathsContaining: directory + "/", times: 1)
        // Short segments, so the next one comes within the test.
        let (recording, log) = await Self.start(h, segmentLength: .milliseconds(300))
        let recovered = await log.waitUntil(timeout: .seconds(30)) { lines in
            lines.contains { $0.hasPrefix("notice: rolling recording: segment") }
        }
        #expect(recovered, "\(log.all)")
        let warnings = log.all.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("write \(directory)/") == true && warnings.first?.contains("Input/output error (EIO)") == true, "\(warnings)")
        await h.place("on-head", register: true)
        await h.settle()
        await Self.finish(h, recording)
        // The segment that could not start left nothing; the later ones are whole, and one
        // holds the placement.
        let segments = Self.segments(directory)
        #expect(!segments.isEmpty)
        var events = ""
        for segment in segments {
            #expect(FileManager.default.fileExists(atPath: "\(directory)/\(segment)/graph.json"), "\(segment)")
            events += (try? String(contentsOfFile: "\(directory)/\(segment)/events.jsonl", encoding: .utf8)) ?? ""
        }
        #expect(events.contains("on-head"), "\(events)")
        // Segments after the first that could be written follow on without a marker, but the
        // daemon marks one that does not follow on (here the first: nothing before it failed,
        // yet the one before it was never written, so there is none to join).
        for segment in segments.dropFirst() {
            #expect(RollingRecordingSegments.gap(before: Int64(segment)!, in: directory) == nil, "\(segment)")
        }
        await h.stop()
    }

    @Test("a segment whose directory cannot be made (EROFS at mkdir, once): said once with the reason, nothing left of it; the next segment records again")
    func segmentDirectoryCannotBeMade() async throws {
        let h = try await DaemonHarness()
        let directory = Self.directory(h)
        let token = FaultInjection.inject(.readOnlyFileSystem, into: "mkdir", onPathsContaining: directory + "/", times: 1)
        let (recording, log) = await Self.start(h, segmentLength: .milliseconds(300))
        let recovered = await log.waitUntil(timeout: .seconds(30)) { lines in
            lines.contains { $0.hasPrefix("notice: rolling recording: segment") }
        }
        #expect(recovered, "\(log.all)")
        #expect(FaultInjection.uses(of: token) == 1)
        let warnings = log.all.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("cannot create \(directory)/") == true && warnings.first?.contains(": Read-only file system;") == true, "\(warnings)")
        await Self.finish(h, recording)
        for segment in Self.segments(directory) {
            #expect(FileManager.default.fileExists(atPath: "\(directory)/\(segment)/graph.json"), "\(segment)")
        }
        await h.stop()
    }

    @Test("after a segment whose writes failed (ENOSPC, once), the next segment is marked as following a gap, so a replay never joins the two")
    func gapMarkedAfterAFailedSegment() async throws {
        let h = try await DaemonHarness()
        let directory = Self.directory(h)
        let (recording, log) = await Self.start(h, segmentLength: .milliseconds(300))
        // The first segment opens; its events file then fails at the next write.
        FaultInjection.inject(.noSpace, into: "write", onPathsContaining: directory + "/", endingWith: "/events.jsonl", times: 1)
        await h.place("on-head", register: true)
        let recovered = await log.waitUntil(timeout: .seconds(30)) { lines in
            lines.contains { $0.hasPrefix("notice: rolling recording: segment") }
        }
        #expect(recovered, "\(log.all)")
        await Self.finish(h, recording)
        let marked = Self.segments(directory).compactMap(Int64.init).filter { RollingRecordingSegments.gap(before: $0, in: directory) != nil }
        #expect(marked.count == 1, "\(Self.segments(directory))")
        if let first = marked.first {
            #expect(RollingRecordingSegments.gap(before: first, in: directory)?.contains("No space left on device (ENOSPC)") == true)
        }
        await h.stop()
    }

    @Test("recording stopped (keep-hours = 0) and started again: the new run's first segment is marked as following a gap")
    func restartedRunIsMarked() async throws {
        let h = try await DaemonHarness()
        let directory = Self.directory(h)
        let (recording, log) = await Self.start(h, segmentLength: .milliseconds(200))
        // A first segment written whole (the next one then follows on), then the recording off.
        @Sendable func segmentLines(_ lines: [String]) -> Int { lines.count { $0.hasPrefix("debug: rolling recording: segment ") } }
        let started = await log.waitUntil(timeout: .seconds(30)) { segmentLines($0) >= 2 }
        #expect(started, "\(log.all)")
        await recording.apply(keepHours: 0)
        let before = Set(Self.segments(directory))
        let linesBefore = segmentLines(log.all)
        await recording.apply(keepHours: 1)
        let restarted = await log.waitUntil(timeout: .seconds(30)) { segmentLines($0) > linesBefore }
        #expect(restarted, "\(log.all)")
        await h.place("on-head", register: true)
        await h.settle()
        await Self.finish(h, recording)
        let new = Self.segments(directory).filter { !before.contains($0) }.compactMap(Int64.init).sorted()
        #expect(!new.isEmpty, "\(Self.segments(directory))")
        if let first = new.first {
            #expect(RollingRecordingSegments.gap(before: first, in: directory)?.contains("not recording before") == true, "\(first)")
        }
        await h.stop()
    }
}
#endif
