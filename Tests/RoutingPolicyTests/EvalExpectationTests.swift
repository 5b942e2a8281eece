import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// `"expect"` on event lines: parsed with the line, checked once the event's timers settle.
struct EvalExpectationTests {
    static let register = #"{"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"off-head","primary-source":"11:22:33:44:55:66"}}"#
    static let onHead = #"{"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}"#

    @Test func expectationsAreParsedBesideTheAction() throws {
        let events = try EvalScript.parse(
            Self.register + "\n" + #"{"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"},"expect":{"default":"A","not-default":"B"}}"#
                + "\n" + #"{"expect":{"not-default":"C"},"at":6000,"select":{"node":"x"}}"#)
        #expect(events.map(\.expectations) == [[], [EvalExpectation(.isDefault, "A"), EvalExpectation(.notDefault, "B")], [EvalExpectation(.notDefault, "C")]])
        guard case .select(let node) = events[2].action else { Issue.record("the action survives the expect"); return }
        #expect(node == "x")
    }

    static let badExpects: [(String, String)] = [
        (#"{"at":1,"select":{"node":"x"},"expect":{"default":"a","winner":"b"}}"#, "expect: unknown key \"winner\""),
        (#"{"at":1,"select":{"node":"x"},"expect":{"default":7}}"#, "expect: \"default\" must be a node.name string"),
        (#"{"at":1,"select":{"node":"x"},"expect":{"not-default":null}}"#, "expect: \"not-default\" must be a node.name string"),
        (#"{"at":1,"select":{"node":"x"},"expect":{}}"#, "expect takes {\"default\""),
        (#"{"at":1,"select":{"node":"x"},"expect":"a"}"#, "expect takes {\"default\""),
        (#"{"at":1,"expect":{"default":"a"}}"#, "one action per line"),
    ]

    @Test(arguments: badExpects)
    func badExpectationsAreRefusedWithFileAndLine(_ line: String, _ message: String) {
        Self.expectRefusedOnItsLine(line, message)
    }

    /// `line`, after a comment line, is refused as `e.jsonl:2: …message…`.
    static func expectRefusedOnItsLine(_ line: String, _ message: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try EvalScript.parse("# a comment\n" + line, source: "e.jsonl")
        } throws: { error in
            guard let error = error as? EvalScriptError else { return false }
            return error.line == 2 && error.description.hasPrefix("e.jsonl:2: ") && error.message.contains(message)
        }
    }

    /// Runs a script as `earshot eval` does and returns the failed expectations.
    static func failures(_ script: String) throws -> [ExpectationFailure] {
        var checker = EvalExpectationChecker()
        var failures: [ExpectationFailure] = []
        try EvalRunner.run(graph: Sinks.desktop, config: PolicyConfig(), hostAddresses: [BluetoothAddress(Sinks.host)!], events: EvalScript.parse(script)) { decision, event in
            failures += checker.observe(decision, event: event)
        }
        return failures + checker.finish()
    }

    /// Coming off at 9000 starts the off-grace (400 ms). With the next event at 20 000 the
    /// timer has fired by the time the expectation is checked: the headphones are no longer
    /// the default, although the event's own decision kept them.
    @Test func theOffGraceTimerFiresBeforeTheExpectationIsChecked() throws {
        let offHead = #"{"at":9000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"},"expect":{"not-default":"bluez_output.AA_BB_CC_DD_EE_FF.1"}}"#
        let later = #"{"at":20000,"select":{"node":"alsa_output.pci-0000_00_1f.3.hdmi-stereo"}}"#
        #expect(try Self.failures([Self.register, Self.onHead, offHead, later].joined(separator: "\n")).isEmpty)
        // The same holds when the off-head is the last event: time runs on to the timer.
        #expect(try Self.failures([Self.register, Self.onHead, offHead].joined(separator: "\n")).isEmpty)

        let expectWorn = offHead.replacingOccurrences(of: "not-default", with: "default")
        let failures = try Self.failures([Self.register, Self.onHead, expectWorn, later].joined(separator: "\n"))
        try #require(failures.count == 1)
        #expect(failures[0].line == 3 && failures[0].at == 9000)
        #expect(failures[0].expected == ["default": .string(Sinks.headphones)])
        #expect(failures[0].default == Sinks.speakers)
        #expect(failures[0].decision.trigger == "off-grace AA:BB:CC:DD:EE:FF" && failures[0].decision.at == 9400)
    }

    /// A next event before the grace ends is where the check happens: the timer has not fired.
    @Test func anEventBeforeTheTimerIsDueIsCheckedWithoutIt() throws {
        let offHead = #"{"at":9000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"},"expect":{"default":"bluez_output.AA_BB_CC_DD_EE_FF.1"}}"#
        let soon = #"{"at":9200,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}"#
        #expect(try Self.failures([Self.register, Self.onHead, offHead, soon].joined(separator: "\n")).isEmpty)
    }

    @Test func failureJSONIsTaggedAndComplete() throws {
        let script = [Self.register, #"{"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"},"expect":{"not-default":"bluez_output.AA_BB_CC_DD_EE_FF.1"}}"#]
        let failure = try #require(try Self.failures(script.joined(separator: "\n")).first)
        let json = try JSONValue.parse(failure.jsonLine)
        guard case .object(let outer) = json, case .object(let inner)? = outer["expectation-failed"] else {
            Issue.record("not tagged: \(failure.jsonLine)")
            return
        }
        #expect(Set(outer.keys) == ["expectation-failed"])
        #expect(Set(inner.keys) == ["line", "at", "expected", "default", "decision"])
        #expect(inner["expected"] == .object(["not-default": .string(Sinks.headphones)]))
        #expect(inner["default"] == .string(Sinks.headphones))
        #expect(inner["decision"]?["decided-by"]?["tier"] == .string("worn"))
        #expect(try DecisionRecord(json: inner["decision"]!) == failure.decision, "the decision decodes as eval's own records do")
        let text = failure.textLines(detail: .summary)
        #expect(text[0].hasPrefix("✗ expectation failed, line 2 (5000 ms): expected not-default \(Sinks.headphones); the default is \(Sinks.headphones)"))
        #expect(text.contains { $0.hasSuffix("decided by worn: beats \(Sinks.speakers) at worn (put on 5000 ms vs not worn)") })
    }
}
