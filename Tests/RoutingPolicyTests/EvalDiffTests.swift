import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// `eval --against`: two configs over the captured graph and the fixture script.
struct EvalDiffTests {
    static func inputs() throws -> (Graph, [EvalEvent]) {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("desktop.json"))
        let events = try EvalScript.parse(String(contentsOf: fixtureURL("headphones-on-off.jsonl"), encoding: .utf8))
        return (graph, events)
    }

    static func diff(old: PolicyConfig, new: PolicyConfig) throws -> EvalDiff.Outcome {
        let (graph, events) = try inputs()
        return try EvalDiff.run(graph: graph, old: old, new: new, hostAddresses: [BluetoothAddress(Sinks.host)!], events: events)
    }

    static let usbFirst = "restore-previous = false\n[[rule]]\nmatch = { \"node.name\" = \"alsa_output.usb-FiiO_K3-00.*\" }\npriority = 100\n"
    /// The old side of the rule comparisons: the same config without the rule. (Starting holds
    /// the default found, issue 19, and a hand-back outranks rules: without restore-previous the
    /// rule decides where the headphones come off.)
    static func noRestore() throws -> PolicyConfig { try PolicyConfigLoader.parse("restore-previous = false\n", file: "old.toml") }

    /// Every decision of one run, as `earshot eval` prints them.
    static func defaults(_ config: PolicyConfig) throws -> [(at: Milliseconds, trigger: String, default: String?)] {
        let (graph, events) = try inputs()
        var result: [(Milliseconds, String, String?)] = []
        try EvalRunner.run(graph: graph, config: config, hostAddresses: [BluetoothAddress(Sinks.host)!], events: events) { decision, _ in
            result.append((decision.at, decision.trigger.description, decision.defaultSink))
        }
        return result
    }

    @Test func identicalConfigsDifferNowhere() throws {
        let outcome = try Self.diff(old: PolicyConfig(), new: PolicyConfig())
        #expect(outcome.differences.isEmpty)
        #expect(outcome.compared == 12, "the initial decision, ten events, one off-grace timer")
        let rule = try PolicyConfigLoader.parse(Self.usbFirst, file: "new.toml")
        #expect(try Self.diff(old: rule, new: rule).differences.isEmpty)
    }

    /// Raising the USB DAC wins where nothing above rule-priority decides: the start holds the
    /// default found, the worn headphones and the user's HDMI pick outrank any rule, so only the
    /// decision where the headphones come off (9400, no hand-back) differs.
    @Test func aUSBDACRuleListsExactlyTheDecisionsItChanges() throws {
        let new = try PolicyConfigLoader.parse(Self.usbFirst, file: "new.toml")
        let old = try Self.noRestore()
        let outcome = try Self.diff(old: old, new: new)
        let listed = outcome.differences.map { "\($0.at) \($0.line.map(String.init) ?? "-") \($0.trigger)" }
        #expect(listed == ["9400 - off-grace AA:BB:CC:DD:EE:FF"])
        for difference in outcome.differences {
            #expect(difference.old.default == Sinks.speakers)
            #expect(difference.new.default == Sinks.dac)
            #expect(difference.old.decided && difference.new.decided)
            #expect(difference.new.winner?.tiers.contains { $0.tier == "rule-priority" && $0.value == "priority 100" } == true)
        }
        try #require(!outcome.differences.isEmpty)
        #expect(outcome.differences[0].old.decidedBy?.tier == "last-choice")
        #expect(outcome.differences[0].new.decidedBy?.tier == "rule-priority")

        // Cross-checked against the two runs printed separately: the listed decisions are the
        // ones whose defaults differ, and only those.
        let oldRun = try Self.defaults(old), changed = try Self.defaults(new)
        try #require(oldRun.count == changed.count)
        let differing = zip(oldRun, changed).filter { $0.0.default != $0.1.default }.map { "\($0.0.at) \($0.0.trigger)" }
        #expect(differing == outcome.differences.map { "\($0.at) \($0.trigger)" })
    }

    /// A longer off-grace moves a timer: at 9400 only the old run fires it and leaves the
    /// headphones; the new run still stands by them (not decided there). Its own off-grace at
    /// 11 000 comes after the user's HDMI pick, so both agree again and nothing more is listed.
    @Test func aTimerOfOneRunOnlyIsComparedWithWhatTheOtherStillStandsBy() throws {
        let new = try PolicyConfigLoader.parse("[timing]\noff-grace-ms = 2000\n", file: "new.toml")
        let outcome = try Self.diff(old: PolicyConfig(), new: new)
        try #require(outcome.differences.count == 1)
        let difference = outcome.differences[0]
        #expect(difference.at == 9400 && difference.trigger == "off-grace AA:BB:CC:DD:EE:FF")
        #expect(difference.old.decided && difference.old.default == Sinks.speakers)
        #expect(!difference.new.decided && difference.new.default == Sinks.headphones)
        #expect(outcome.compared == 13, "twelve places in each run, the two off-grace timers apart")
    }

    @Test func differenceJSONHasTheDocumentedFields() throws {
        let new = try PolicyConfigLoader.parse(Self.usbFirst, file: "new.toml")
        let difference = try #require(try Self.diff(old: try Self.noRestore(), new: new).differences.last)
        let json = try JSONValue.parse(difference.jsonLine)
        guard case .object(let fields) = json, case .object(let old)? = fields["old"], case .object(let newSide)? = fields["new"] else {
            Issue.record("not an object: \(difference.jsonLine)")
            return
        }
        #expect(Set(fields.keys) == ["at", "line", "trigger", "old", "new", "direction"] && fields["direction"] == .string("output"))
        #expect(Set(old.keys) == ["decided", "default", "reason", "decided-by", "winner"] && Set(newSide.keys) == Set(old.keys))
        #expect(fields["at"] == .integer(9400) && fields["line"] == .null && fields["trigger"] == .string("off-grace AA:BB:CC:DD:EE:FF"))
        #expect(newSide["default"] == .string(Sinks.dac) && old["default"] == .string(Sinks.speakers))
        #expect(newSide["decided-by"]?["tier"] == .string("rule-priority"))
        #expect(newSide["winner"]?["node"] == .string(Sinks.dac))
    }

    @Test func textIsAnAlignedTableWithBothRunsReasons() throws {
        let new = try PolicyConfigLoader.parse(Self.usbFirst, file: "new.toml")
        let lines = EvalDiffText.render(try Self.diff(old: try Self.noRestore(), new: new).differences)
        #expect(lines.count == 1 + 1 * 3)
        let header = try #require(lines.first)
        let rows = lines.filter { !$0.hasPrefix(" ") || $0.trimmingCharacters(in: .whitespaces).first?.isNumber == true }.dropFirst()
        // Every row's OLD → NEW column starts where the header's does.
        let column = try #require(header.range(of: "OLD → NEW")).lowerBound.utf16Offset(in: header)
        for row in rows { #expect(row.range(of: Sinks.speakers)?.lowerBound.utf16Offset(in: row) == column, "\(row)") }
        #expect(lines.contains { $0.contains("last-choice → rule-priority") })
        #expect(lines.contains { $0.contains("new: decided by rule-priority: beats \(Sinks.speakers) at rule-priority (priority 100 vs 0)") })
        #expect(EvalDiffText.render([]).isEmpty)
    }

    /// The generated day of `scripts/bench replay` is a valid dump and script that runs.
    @Test func replayWorkloadIsAValidDumpAndScript() throws {
        let workload = ReplayWorkload(sinks: 50, events: 600)
        let graph = try PwDumpDecoder.decode(Data(workload.graph.canonicalText.utf8))
        #expect(graph.sinks.count == 50)
        let events = try EvalScript.parse(workload.script.map(\.canonicalText).joined(separator: "\n"))
        #expect(events.count == 600)
        #expect(events.last.map { $0.at <= ReplayWorkload.day } == true)
        let verbs = Set(workload.script.compactMap { line -> String? in
            guard case .object(let fields) = line else { return nil }
            return fields.keys.first { $0 != "at" }
        })
        #expect(verbs == ["register", "update", "unregister", "select", "add", "remove"])
        var decisions = 0
        try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [BluetoothAddress(ReplayWorkload.host)!], events: events) { _, _ in decisions += 1 }
        #expect(decisions > 600)
        #expect(ReplayWorkload(sinks: 50, events: 600).script == workload.script, "seeded: the same day every time")
    }
}
