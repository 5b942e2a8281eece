import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// The examples of docs/control-protocol.md, run as written against a control server.
@Suite("control protocol examples", .timeLimit(.minutes(1)), .blockingCalls)
struct ControlProtocolDocTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/control-protocol.md")

    /// The first fenced block of `language`.
    static func example(_ language: String) throws -> String {
        let text = try String(contentsOf: document, encoding: .utf8)
        guard let start = text.range(of: "```\(language)\n"), let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw Failure("no ```\(language) block in \(document.path)")
        }
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// The ```json block whose text contains `marker` (an event's example line).
    static func jsonExample(containing marker: String) throws -> String {
        let text = try String(contentsOf: document, encoding: .utf8)
        let blocks = text.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
        guard let block = blocks.first(where: { $0.contains(marker) }) else { throw Failure("no ```json block with \(marker) in \(document.path)") }
        return block
    }

    @Test("the Python example registers, updates, subscribes and prints events until the daemon closes")
    func python() async throws {
        try await ControlFixture.with { fixture in
            let script = fixture.root.appendingPathComponent("example.py")
            try Self.example("python").write(to: script, atomically: true, encoding: .utf8)
            let log = fixture.root.appendingPathComponent("python.log")
            let child = try ChildProcess(
                name: "python-example", arguments: ["/usr/bin/python3", script.path],
                environment: ["XDG_RUNTIME_DIR": fixture.root.path, "PATH": "/usr/bin:/bin"], logFile: log)
            defer { child.stop() }
            await fixture.control.waitForSubscriber()
            await fixture.control.emit(.route())
            await fixture.control.finishSubscriptions()
            #expect(try await offPool { child.waitForExit(timeout: .seconds(20)) } == 0, "\(child.logTail())")
            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 4, "\(lines)")
            #expect(lines.first?.contains("'ok': True") == true)
            #expect(lines.dropFirst().first?.contains("'placement': 'on-head'") == true)
            #expect(lines.last?.contains("'reason': 'placement-changed'") == true)
        }
    }

    @Test("the socat lines register, update and read status")
    func socat() async throws {
        try await ControlFixture.with { fixture in
            // Everything but the endless subscribe line, and without jq.
            let lines = try Self.example("sh").split(separator: "\n")
            let script = lines.filter { !$0.contains("subscribe") && !$0.hasPrefix("#") }
                .map { $0.replacingOccurrences(of: " | jq .status.decision.default", with: "") }
                .joined(separator: "\n")
            let file = fixture.root.appendingPathComponent("example.sh")
            try script.write(to: file, atomically: true, encoding: .utf8)
            let log = fixture.root.appendingPathComponent("socat.log")
            let child = try ChildProcess(
                name: "socat-example", arguments: ["/bin/sh", "-e", file.path],
                environment: ["XDG_RUNTIME_DIR": fixture.root.path, "PATH": "/usr/bin:/bin"], logFile: log)
            defer { child.stop() }
            #expect(try await offPool { child.waitForExit(timeout: .seconds(20)) } == 0, "\(child.logTail())")
            let output = try String(contentsOf: log, encoding: .utf8)
            let replies = try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
            #expect(replies.count == 3, "\(output)")
            #expect(replies.allSatisfy { $0["ok"] == .bool(true) })
            #expect(replies.dropFirst().first?["accessory"]?["placement"] == .string("on-head"))
        }
    }
}
