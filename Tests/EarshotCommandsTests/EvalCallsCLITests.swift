import AudioGraph
import Foundation
import TestScheduling
import Testing

/// `earshot eval` over docs/examples/calls.jsonl (issue 32): capture streams in the script,
/// `calls` in the output, a failed `stream-source` exiting 1.
@Suite(.blockingCalls)
struct EvalCallsCLITests {
    static let graph = EarshotBinary.fixtures.appendingPathComponent("real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json").path
    static let events = EarshotBinary.repository.appendingPathComponent("docs/examples/calls.jsonl").path
    static let loopback = "bluez_input.AC:80:0A:CA:97:12"

    @Test("text: the example holds, with a calls line and the moves")
    func text() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("          calls → \(Self.loopback) (keeps A2DP: calls only); 1 pointed: #401 Some Softphone (media.role = Communication)"))
        #expect(lines.contains("            stream #402 Chromium input → default source (back)"))
        #expect(lines.contains("            stream #403 Some Softphone → default source (stale-target)"))
    }

    @Test("json: every decision has calls; a failed stream-source is printed and exits 1")
    func json() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--format", "json"])
        #expect(result.status == 0)
        let objects = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(objects.allSatisfy { $0["calls"] != nil })
        #expect(objects.contains { $0["calls"]?["streams"]?.canonicalText.contains(#""stream":402"#) == true })

        let script = try String(contentsOfFile: Self.events, encoding: .utf8).replacingOccurrences(
            of: #"{"stream":400,"source":null}}}"#, with: #"{"stream":400,"source":"\#(Self.loopback)"}}}"#)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("calls-\(UUID().uuidString).jsonl")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let failed = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", file.path, "--format", "json"])
        #expect(failed.status == 1)
        let failure = try failed.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }.first { $0["expectation-failed"] != nil }
        #expect(failure?["expectation-failed"]?["expected"] == .object(["stream-source": .object(["stream": .integer(400), "source": .string(Self.loopback)])]))
    }
}
