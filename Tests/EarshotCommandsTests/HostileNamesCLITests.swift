import AudioGraph
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Any PipeWire client names its nodes: a name or description with ESC, BEL, a line break or a
/// bidi override reaches the terminal escaped (`\u{1B}`), never raw; JSON keeps the names as
/// they are (its own escapes).
@Suite("hostile node names", .timeLimit(.minutes(2)), .blockingCalls)
struct HostileNamesCLITests {
    static let graph = EarshotBinary.fixtures.appendingPathComponent("hostile-names.json").path
    /// The fixture's sinks (desktop.json's, renamed).
    static let evil = "alsa_output.evil\u{1B}]0;pwned\u{07}.analog-stereo"
    static let forging = "alsa_output.hdmi\nearshot: forged line"
    static let analog = "alsa_output.pci-0000_00_1f.3.analog-stereo"

    /// No character a terminal acts on: only the line feeds between lines.
    static func expectPrintable(_ text: String, _ sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let raw = text.unicodeScalars.filter { $0 != "\n" && TerminalText.isEscaped($0) }
        #expect(raw.isEmpty, "raw \(raw.map { "U+" + String($0.value, radix: 16) }) in \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("earshot: forged") }, "a forged line: \(text)", sourceLocation: sourceLocation)
    }

    static func events() throws -> String {
        // The hostile names as JSON strings (escaped the JSON way).
        let select = JSONValue.string(forging).canonicalText
        let expected = JSONValue.string(evil).canonicalText
        return try EarshotBinary.temporaryFile("hostile.jsonl", """
            {"at":1000,"select":{"node":\(select)}}
            {"at":2000,"select":{"node":"\(analog)"},"expect":{"default":\(expected)}}

            """)
    }

    @Test("eval text: names escaped in rows, explanations, rejections and the failed expectation; one row stays one line")
    func evalText() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", try Self.events(), "--explain", "full"], environment: Self.isolated())
        #expect(result.status == 1, "the expectation fails: \(result.standardError)")
        Self.expectPrintable(result.standardOutput)
        Self.expectPrintable(result.standardError)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("initial") && $0.contains(#"= alsa_output.evil\u{1B}]0;pwned\u{07}.analog-stereo"#) }, "\(result.standardOutput)")
        #expect(lines.contains { $0.contains(#"→ alsa_output.hdmi\u{0A}earshot: forged line"#) && $0.hasSuffix("user-override") }, "\(result.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("✗ expectation failed, line 2") && $0.contains(#"expected default alsa_output.evil\u{1B}]0;pwned\u{07}.analog-stereo"#) })
    }

    @Test("eval JSON: the names as they are, in JSON's own escapes")
    func evalJSON() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", try Self.events(), "--format", "json"], environment: Self.isolated())
        #expect(result.status == 1)
        #expect(!result.standardOutput.unicodeScalars.contains { $0 != "\n" && $0.value < 0x20 }, "JSON escapes its control characters")
        #expect(!result.standardOutput.contains(#"\u{"#), "no terminal escapes in JSON")
        let decisions = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(decisions.first?["default"] == .string(Self.evil))
        #expect(decisions.contains { $0["default"] == .string(Self.forging) })
        #expect(result.standardOutput.contains(#"alsa_output.hdmi\nearshot: forged line"#))
    }

    @Test("earshot graph on a live PipeWire: a sink named and described with ESC, BEL, a line break and a bidi override is printed escaped; --json keeps it")
    func liveGraph() async throws {
        let binary = try #require(EarshotBinary.url?.path)
        let name = "alsa_output.evil\u{1B}[31m.\u{202E}stereo"
        let description = "Evil\u{1B}]0;pwned\u{07} DAC\nearshot: forged line"
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            try await Self.createHostileSink(in: sandbox)
            let text = try sandbox.run([binary, "graph"])
            #expect(text.status == 0)
            Self.expectPrintable(text.output)
            #expect(text.output.contains(#"alsa_output.evil\u{1B}[31m.\u{202E}stereo"#), "\(text.output)")
            #expect(text.output.contains(#"Evil\u{1B}]0;pwned\u{07} DAC\u{0A}earshot: forged line"#), "\(text.output)")

            let json = try sandbox.run([binary, "graph", "--json"])
            #expect(json.status == 0)
            let object = try JSONValue.parse(json.output)
            guard case .array(let sinks)? = object["sinks"] else { throw FixtureError("no sinks in \(json.output)") }
            let evil = try #require(sinks.first { $0["name"] == .string(name) }, "\(json.output)")
            #expect(evil["description"] == .string(description))
        }
    }

    @Test("the daemon: its log lines, earshot status and earshot watch print a hostile sink's name escaped")
    func daemon() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            let daemon = try DaemonFixture.start(in: sandbox)
            // The socket comes before the first graph: the start's own route change (`initial`)
            // must be behind us, or it is the one route change the watch counts.
            _ = try await daemon.settle(try DaemonSession(path: daemon.socketPath))
            let watch = try sandbox.spawn("watch", [daemon.binary, "watch", "--route-changes", "1"])
            try await watch.waitForLog(containing: "earshot watch: subscribed at \(daemon.socketPath)")
            // Headphones arriving take the output (new-device-available): the name is everywhere.
            try await Self.createHostileSink(in: sandbox, formFactor: "headphone")
            #expect(watch.waitForExit(timeout: .seconds(10)) == 0, "\(watch.logTail())")
            let watched = watch.logTail()
            Self.expectPrintable(watched)
            #expect(watched.contains(#"new-device-available  alsa_output.sandbox.analog-stereo -> alsa_output.evil\u{1B}[31m.\u{202E}stereo"#), "\(watched)")

            let status = try daemon.earshot("status", "--explain")
            #expect(status.status == 0)
            Self.expectPrintable(status.output)
            #expect(status.output.contains(#"default: alsa_output.evil\u{1B}[31m.\u{202E}stereo (new-device-available"#), "\(status.output)")

            try await daemon.process.waitForLog(containing: #"route new-device-available: alsa_output.sandbox.analog-stereo → alsa_output.evil\u{1B}[31m.\u{202E}stereo"#)
            let log = daemon.process.logTail(lines: 400)
            Self.expectPrintable(log)
            // --verbose: the explanation, a record a line, each escaped.
            #expect(log.contains(#"#1 alsa_output.evil\u{1B}[31m.\u{202E}stereo: "#), "\(log)")
        }
    }

    /// A sink named `alsa_output.evil<ESC>[31m.<U+202E>stereo`, described with ESC, BEL and a
    /// line break, as any client may make one: SPA-JSON escapes in pw-cli's properties (a raw
    /// ESC is refused there). Returns once it has its ports.
    static func createHostileSink(in sandbox: PipeWireSandbox, formFactor: String = "internal") async throws {
        let created = try sandbox.run([
            "pw-cli", "create-node", "adapter",
            #"{ factory.name=support.null-audio-sink node.name="alsa_output.evil\u001b[31m.\u202estereo" "#
                + #"node.description="Evil\u001b]0;pwned\u0007 DAC\nearshot: forged line" media.class=Audio/Sink "#
                + #"device.form-factor=\#(formFactor) device.bus=usb object.linger=true audio.position=[FL,FR] "#
                + #"adapter.auto-port-config={ mode=dsp monitor=true position=preserve } audio.format=F32P audio.rate=48000 }"#,
        ])
        #expect(created.status == 0, "\(created.output)")
        let name = "alsa_output.evil\u{1B}[31m.\u{202E}stereo"
        _ = try await sandbox.observer.waitUntil("the hostile sink with its ports") { graph in
            graph.node(named: name).map { graph.ports(of: $0.id, direction: .input).count == 2 } ?? false
        }
    }

    /// Runtime, state and config of this test's own (nothing of the user's is read).
    static func isolated() -> [String: String] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-hostile-\(UUID().uuidString.prefix(8))").path
        return ["XDG_RUNTIME_DIR": root + "/runtime", "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config"]
    }
}
