import WireFields
import AudioGraph
import ControlProtocol
@testable import EarshotCommands
import Foundation
import TestScheduling
import Testing

/// `earshot record --since` over rolling-recording segments written by hand: inputs are never
/// joined across a gap the daemon marked.
@Suite("earshot record --since: segments and gaps", .blockingCalls)
struct RecordAssembleTests {
    /// A recordings directory with one segment per entry: its start, events (each an `at` and
    /// a marker field) and the gap marker's text, if any.
    static func recordings(_ segments: [(start: Int64, events: [Int64], gap: String?)]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-assemble-\(UUID().uuidString)").path
        for segment in segments {
            let path = "\(directory)/\(segment.start)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data(#"[]"#.utf8).write(to: URL(fileURLWithPath: "\(path)/graph.json"))
            let lines = segment.events.map { #"{"at":\#($0),"segment":\#(segment.start),"type":"marker"}"# + "\n" }.joined()
            try Data(lines.utf8).write(to: URL(fileURLWithPath: "\(path)/events.jsonl"))
            if let gap = segment.gap { try Data((gap + "\n").utf8).write(to: URL(fileURLWithPath: "\(path)/\(RollingRecordingSegments.gapMarker)")) }
        }
        return directory
    }

    static func segmentsIn(_ output: String) throws -> [Int64] {
        let text = try String(contentsOfFile: "\(output)/events.jsonl", encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            guard case .integer(let segment)? = try JSONValue.parse(String(line))["segment"] else { throw Failure("no segment in \(line)") }
            return segment
        }
    }

    @Test("segments that follow on are joined; a marked gap starts the replay after it, and says so")
    func gapStartsTheReplay() throws {
        let hour: Int64 = 3_600_000
        let recordings = try Self.recordings([
            (0, [10, 20], nil),
            (hour, [30], nil),
            (2 * hour, [40], "the segment before could not be written (write …: No space left on device (ENOSPC))"),
            (3 * hour, [50], nil),
        ])
        defer { try? FileManager.default.removeItem(atPath: recordings) }
        let output = recordings + "-out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = RecordActions.assemble(recordings: recordings, since: .seconds(4 * 3600), into: output, now: 4 * hour)
        #expect(outcome.exitCode == 0, "\(outcome.standardError)")
        #expect(try Self.segmentsIn(output) == [2 * hour, 3 * hour])
        #expect(outcome.standardError.contains("a gap before them (the segment before could not be written"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("inputs from 7200 s ago only"), "\(outcome.standardError)")
    }

    @Test("without a gap marker (segments of an older daemon, or none missing) every segment from the origin on is joined, as before")
    func noMarkerJoins() throws {
        let hour: Int64 = 3_600_000
        let recordings = try Self.recordings([(0, [10], nil), (hour, [20], nil), (2 * hour, [30], nil)])
        defer { try? FileManager.default.removeItem(atPath: recordings) }
        let output = recordings + "-out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = RecordActions.assemble(recordings: recordings, since: .seconds(3 * 3600), into: output, now: 3 * hour)
        #expect(outcome.exitCode == 0, "\(outcome.standardError)")
        #expect(try Self.segmentsIn(output) == [0, hour, 2 * hour])
        #expect(!outcome.standardError.contains("gap"))
    }

    @Test("a gap before the origin itself changes nothing: the origin's graph is where the replay starts anyway")
    func gapBeforeTheOrigin() throws {
        let hour: Int64 = 3_600_000
        let recordings = try Self.recordings([(0, [10], nil), (hour, [20], "the daemon was not recording before this segment"), (2 * hour, [30], nil)])
        defer { try? FileManager.default.removeItem(atPath: recordings) }
        let output = recordings + "-out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = RecordActions.assemble(recordings: recordings, since: .seconds(3600), into: output, now: 2 * hour + 1)
        #expect(try Self.segmentsIn(output) == [hour, 2 * hour])
        #expect(!outcome.standardError.contains("gap"), "\(outcome.standardError)")
    }
}

private struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
