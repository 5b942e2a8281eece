import AudioGraph
import Foundation
import TestScheduling
import Testing

/// `earshot eval` as a check: `"expect"` lines and `--against`, by their exit codes.
@Suite(.blockingCalls)
struct EvalCheckCLITests {
    static let graph = EvalCLITests.graph
    static let events = EvalCLITests.events
    static let hosts = ["--host-address", "11:22:33:44:55:66"]
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
    static let speakers = "alsa_output.pci-0000_00_1f.3.analog-stereo"
    static let register = #"{"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"off-head","primary-source":"11:22:33:44:55:66"}}"#

    static func script(expectingAfterOffHead expectation: String) throws -> String {
        try EarshotBinary.temporaryFile("expect.jsonl", [
            register,
            #"{"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"},"expect":{"default":"\#(headphones)"}}"#,
            #"{"at":9000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"},"expect":\#(expectation)}"#,
            #"{"at":20000,"select":{"node":"alsa_output.pci-0000_00_1f.3.hdmi-stereo"}}"#,
        ].joined(separator: "\n") + "\n")
    }

    @Test func passingExpectationsExitZero() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.script(expectingAfterOffHead: #"{"default":"\#(Self.speakers)"}"#)] + Self.hosts)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(!result.standardOutput.contains("expectation failed"))
    }

    @Test func aFailedExpectationIsPrintedAfterItsTimerAndExitsOne() throws {
        let script = try Self.script(expectingAfterOffHead: #"{"default":"\#(Self.headphones)"}"#)
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script] + Self.hosts)
        #expect(result.status == 1, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let failure = try #require(lines.firstIndex { $0.hasPrefix("✗ expectation failed, line 3 (9000 ms): expected default \(Self.headphones); the default is \(Self.speakers)") })
        // After the off-grace row, before the next event's, with the decision's explanation.
        #expect(lines[failure - 4].contains("9400  off-grace AA:BB:CC:DD:EE:FF"))
        #expect(lines[failure + 1 ..< failure + 4].contains { $0.contains("decided by restore:") })
        #expect(lines[(failure + 1)...].contains { $0.contains("20000  select") }, "everything is still printed")
        #expect(result.standardError.contains("earshot eval: 1 expectation(s) failed"))

        let json = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script, "--format", "json"] + Self.hosts)
        #expect(json.status == 1)
        let objects = try json.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        let failures = objects.compactMap { $0["expectation-failed"] }
        try #require(failures.count == 1)
        #expect(failures[0]["line"] == .integer(3) && failures[0]["default"] == .string(Self.speakers))
        #expect(failures[0]["expected"] == .object(["default": .string(Self.headphones)]))
    }

    @Test func aBadExpectationExitsTwoWithItsLine() throws {
        let script = try EarshotBinary.temporaryFile("bad-expect.jsonl", Self.register + "\n" + #"{"at":1,"select":{"node":"x"},"expect":{"defualt":"x"}}"# + "\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
        #expect(result.status == 2)
        #expect(result.standardError.contains("bad-expect.jsonl:2: expect: unknown key \"defualt\""), "\(result.standardError)")
    }

    static func config(_ text: String) throws -> String { try EarshotBinary.temporaryFile("c.toml", text) }
    static let usbFirst = "[[rule]]\nmatch = { \"device.bus\" = \"usb\" }\npriority = 100\n"

    @Test func againstTheSameConfigPrintsNothingAndExitsZero() throws {
        let config = try Self.config(Self.usbFirst)
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--config", config, "--against", config] + Self.hosts)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
        // No --config: the default search (none in the tests' XDG_CONFIG_HOME) is the built-in.
        let builtIn = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--against-builtin"] + Self.hosts)
        #expect(builtIn.status == 0, "\(builtIn.standardError)")
    }

    @Test func againstADifferentConfigListsTheDifferencesAndExitsOne() throws {
        // Starting holds the default found and a hand-back outranks rules (issue 19): without
        // restore-previous the rule decides where the headphones come off.
        let config = try Self.config("restore-previous = false\n" + Self.usbFirst)
        let text = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--config", config, "--against-builtin"] + Self.hosts)
        #expect(text.status == 1, "\(text.standardError)")
        let lines = text.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("AT ms  LINE  TRIGGER") == true)
        #expect(lines.contains { $0.contains("9400     -  off-grace AA:BB:CC:DD:EE:FF") && $0.contains("\(Self.speakers) → alsa_output.usb-FiiO_K3-00.analog-stereo") })
        #expect(text.standardError.contains("1 of 12 decisions differ from built-in defaults"), "\(text.standardError)")

        let json = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--config", config, "--against-builtin", "--format", "json"] + Self.hosts)
        #expect(json.status == 1)
        let objects = try json.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(objects.count == 1)
        #expect(objects.allSatisfy { $0["old"]?["default"] == .string(Self.speakers) && $0["new"]?["decided-by"] != nil })
    }

    @Test func againstUsageErrorsExitTwo() throws {
        let config = try Self.config(Self.usbFirst)
        let both = try EarshotBinary.run(["eval", "--graph", Self.graph, "--against", config, "--against-builtin"])
        #expect(both.status == 2)
        #expect(both.standardError.contains("--against and --against-builtin cannot be used together"))
        let missing = try EarshotBinary.run(["eval", "--graph", Self.graph, "--against", "/nonexistent/old.toml"])
        #expect(missing.status == 2, "\(missing.standardError)")
        #expect(missing.standardError.contains("/nonexistent/old.toml"))
        let bad = try EarshotBinary.run(["eval", "--graph", Self.graph, "--against", Self.config("[[rule]]\npriority = \"high\"\n")])
        #expect(bad.status == 2, "\(bad.standardError)")
    }
}
