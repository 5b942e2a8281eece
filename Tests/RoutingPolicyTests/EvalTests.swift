import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// The event script format and a whole run over the captured pw-dump, compared as data.
struct EvalTests {
    struct BadLine: CustomTestStringConvertible, Sendable {
        var script: String
        var line: Int
        var message: String
        var testDescription: String { message }
    }

    static let badLines: [BadLine] = [
        BadLine(script: "not json", line: 1, message: "column 2: not valid JSON"),
        BadLine(script: "[1]", line: 1, message: "not a JSON object"),
        BadLine(script: "{\"at\":9007199254740993,\"select\":{\"node\":\"x\"}}", line: 1, message: "is too late: at most 9007199254740992 ms"),
        BadLine(script: "\n# comment\n{\"select\":{\"node\":\"x\"}}", line: 3, message: "\"at\" must be a whole number"),
        BadLine(script: "{\"at\":-1,\"select\":{\"node\":\"x\"}}", line: 1, message: "\"at\" must be a whole number"),
        BadLine(script: "{\"at\":5,\"select\":{\"node\":\"x\"}}\n{\"at\":4,\"select\":{\"node\":\"x\"}}", line: 2, message: "goes back in time"),
        BadLine(script: "{\"at\":1,\"select\":{\"node\":\"x\"},\"remove\":{\"node\":\"x\"}}", line: 1, message: "one action per line"),
        BadLine(script: "{\"at\":1}", line: 1, message: "one action per line"),
        BadLine(script: "{\"at\":1,\"plug\":{}}", line: 1, message: "unknown action \"plug\""),
        BadLine(script: "{\"at\":1,\"remove\":{\"name\":\"x\"}}", line: 1, message: "remove takes {\"node\""),
        BadLine(script: "{\"at\":1,\"add\":{\"id\":7,\"type\":\"PipeWire:Interface:Port\",\"info\":{\"direction\":\"input\"}}}", line: 1, message: "add takes one pw-dump Node or Device"),
        BadLine(script: "{\"at\":1,\"add\":{\"type\":\"PipeWire:Interface:Node\"}}", line: 1, message: "missing field \"id\""),
    ]

    @Test(arguments: badLines)
    func malformedLinesNameTheirLine(_ c: BadLine) {
        #expect {
            _ = try EvalScript.parse(c.script, source: "e.jsonl")
        } throws: { error in
            guard let error = error as? EvalScriptError else { return false }
            return error.line == c.line && error.description.hasPrefix("e.jsonl:\(c.line): ") && error.message.contains(c.message)
        }
    }

    @Test func refusedRequestsAreDecisionsNotScriptErrors() throws {
        let events = try EvalScript.parse(#"{"at":1,"update":{"accessory":"AA:BB","placement":"on-head"}}"#)
        var decisions: [Decision] = []
        try EvalRunner.run(graph: Sinks.desktop, config: PolicyConfig(), hostAddresses: [], events: events) { d, _ in decisions.append(d) }
        #expect(decisions.last?.error?.code == .invalidRequest)
        #expect(decisions.last?.changed == false)
    }

    @Test func removingAnUnknownNodeIsAScriptError() throws {
        let events = try EvalScript.parse("\n{\"at\":1,\"remove\":{\"node\":\"nope\"}}")
        #expect(throws: EvalScriptError.self) {
            try EvalRunner.run(graph: Sinks.desktop, config: PolicyConfig(), hostAddresses: [], events: events) { _, _ in }
        }
    }

    @Test func capturedGraphHasTheExpectedSinkClasses() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("desktop.json"))
        let classes = Dictionary(uniqueKeysWithValues: graph.sinks.map { ($0.name ?? "", SinkClass.of($0, in: graph)) })
        #expect(classes == [Sinks.speakers: .internal, Sinks.hdmi: .hdmi, Sinks.dac: .usb, Sinks.headphones: .headphones, Sinks.headset: .headset])
        #expect(graph.configuredDefaultSinkName == Sinks.speakers)
    }

    /// Every decision of the fixture script: at, trigger, default (changed?), reason, summary.
    @Test func fixtureScriptTimeline() throws {
        let timeline = try Self.runFixture().map { d in
            "\(d.at) | \(d.trigger) | \(d.changed ? "→ " : "")\(d.defaultSink ?? "-") | \(d.reason?.rawValue ?? "-") | \(d.summary)\(d.error.map { " | \($0.code.rawValue)" } ?? "")"
        }
        #expect(timeline == [
            "0 | initial | alsa_output.pci-0000_00_1f.3.analog-stereo | initial | 5/5 sinks eligible",
            "0 | register AA:BB:CC:DD:EE:FF | alsa_output.pci-0000_00_1f.3.analog-stereo | - | 4/5 sinks eligible: 1 off-head",
            "0 | register 50:C2:ED:12:34:56 | alsa_output.pci-0000_00_1f.3.analog-stereo | - | 3/5 sinks eligible: 1 off-head, 1 other-host",
            "5000 | update AA:BB:CC:DD:EE:FF | → bluez_output.AA_BB_CC_DD_EE_FF.1 | placement-changed | 4/5 sinks eligible: 1 other-host",
            "6000 | update AA:BB:CC:DD:EE:FF | bluez_output.AA_BB_CC_DD_EE_FF.1 | - | 4/5 sinks eligible: 1 other-host",
            "6200 | update AA:BB:CC:DD:EE:FF | bluez_output.AA_BB_CC_DD_EE_FF.1 | - | 4/5 sinks eligible: 1 other-host",
            "7000 | update AA:BB:CC:DD:EE:FF | bluez_output.AA_BB_CC_DD_EE_FF.1 | - | 4/5 sinks eligible: 1 other-host",
            "8000 | update 50:C2:ED:12:34:56 | bluez_output.AA_BB_CC_DD_EE_FF.1 | - | 4/5 sinks eligible: 1 other-host | accessory-not-capable",
            "9000 | update AA:BB:CC:DD:EE:FF | bluez_output.AA_BB_CC_DD_EE_FF.1 | - | 4/5 sinks eligible: 1 other-host",
            "9400 | off-grace AA:BB:CC:DD:EE:FF | → alsa_output.pci-0000_00_1f.3.analog-stereo | placement-changed | 3/5 sinks eligible: 1 off-head, 1 other-host",
            "9900 | select alsa_output.pci-0000_00_1f.3.hdmi-stereo | → alsa_output.pci-0000_00_1f.3.hdmi-stereo | user-override | 3/5 sinks eligible: 1 off-head, 1 other-host",
            "12000 | remove alsa_output.usb-FiiO_K3-00.analog-stereo | alsa_output.pci-0000_00_1f.3.hdmi-stereo | - | 2/4 sinks eligible: 1 off-head, 1 other-host",
        ])
    }

    /// The explanation of the winner when the headphones take the output, tier by tier.
    @Test func explanationSnapshot() throws {
        let decision = try Self.runFixture()[3]
        let explanation = decision.explanation(of: decision.ranking[0])
        let terms = explanation.terms.map { [$0.tier.rawValue, $0.value, $0.why] }
        #expect(explanation.node == Sinks.headphones)
        #expect(terms == [
            ["worn", "put on 5000 ms, primary source",
             "§2.2 accessory AA:BB:CC:DD:EE:FF is on-head since 5000 ms (the most recently put on ranks first); its primary source 11:22:33:44:55:66 (--host-address) is this host, not only its secondary"],
            ["class-order", "headphones (9 of 9)",
             "§2.6 class headphones, 9 place(s) from the bottom of class-order [headphones, headset, usb, speaker, line, internal, other, digital, hdmi]"],
        ])
        #expect(decision.decidedBy == DecidedBy(tier: .worn, runnerUp: Sinks.speakers, why: "beats \(Sinks.speakers) at worn (put on 5000 ms vs not worn)"))
        #expect(decision.rejected.map { [$0.node, decision.why($0)] } == [
            [Sinks.headset, "§1 accessory 50:C2:ED:12:34:56 is playing for another host (primary 77:88:99:AA:BB:CC; this host is 11:22:33:44:55:66 (--host-address))"],
        ])
        // Text: one line per sink with its tier values, and the line saying which tier decided.
        let text = DecisionText.render(decision, detail: .full)
        #expect(text.contains("#1 \(Sinks.headphones): worn put on 5000 ms, primary source · class-order headphones (9 of 9)"))
        #expect(text.contains("#2 \(Sinks.speakers): last-choice last choice · class-order internal (4 of 9) · session-priority priority.session 1009"))
        #expect(text.contains("decided by worn: beats \(Sinks.speakers) at worn (put on 5000 ms vs not worn)"))
        #expect(!text.contains(" = "), "no sums")
        let summary = DecisionText.render(decision, detail: .summary)
        #expect(summary.contains("winner: \(Sinks.headphones): worn put on 5000 ms, primary source · class-order headphones (9 of 9)"))
        #expect(summary.contains("decided by worn: beats"))
    }

    @Test func jsonRecordHasEveryField() throws {
        let decision = try Self.runFixture()[7]
        let object = try JSONValue.parse(DecisionRecord(decision, line: 9).jsonLine)
        for key in ["at", "trigger", "default", "previous", "changed", "reason", "ranking", "decided-by", "rejected", "error", "summary"] {
            #expect(object[key] != nil, "\(key)")
        }
        #expect(object["error"]?["code"] == .string("accessory-not-capable"))
        #expect(object["reason"] == .null)
        guard case .array(let ranking)? = object["ranking"], case .array(let tiers)? = ranking.first?["tiers"] else {
            Issue.record("ranking/tiers missing")
            return
        }
        #expect(ranking.allSatisfy { $0["score"] == nil })
        #expect(tiers.allSatisfy { $0["tier"] != nil && $0["value"] != nil && $0["why"] != nil })
    }

    @Test func decidedByJSONShape() throws {
        let decisions = try Self.runFixture()
        let object = try JSONValue.parse(DecisionRecord(decisions[3]).jsonLine)
        #expect(object["decided-by"] == .object([
            "tier": .string("worn"), "runner-up": .string(Sinks.speakers),
            "why": .string("beats \(Sinks.speakers) at worn (put on 5000 ms vs not worn)"),
        ]))
        // One eligible sink: no runner-up, so null.
        let lone = run([], graph: Sinks.graph([Sinks.speakersNode])).last!
        #expect(try JSONValue.parse(DecisionRecord(lone).jsonLine)["decided-by"] == .null)
        // What is sent as JSON reads back as the same record (the daemon's status does this).
        let record = DecisionRecord(decisions[3], line: 4)
        #expect(try DecisionRecord(json: JSONValue.parse(record.jsonLine)) == record)
    }

    static func runFixture() throws -> [Decision] {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("desktop.json"))
        let text = try String(contentsOf: fixtureURL("headphones-on-off.jsonl"), encoding: .utf8)
        var decisions: [Decision] = []
        try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [BluetoothAddress(Sinks.host)!], events: EvalScript.parse(text)) { d, _ in
            decisions.append(d)
        }
        return decisions
    }
}
