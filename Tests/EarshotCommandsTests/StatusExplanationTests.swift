@testable import ControlProtocol
import PolicyEval
import ControlProtocol
import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

/// `earshot status` explains a decision with the same lines as `earshot eval`: the status JSON
/// carries the decision record, and one renderer (DecisionText) prints it for both.
@Suite(.blockingCalls)
struct StatusExplanationTests {
    @Test func statusAndEvalPrintTheSameExplanation() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: EarshotBinary.fixtures.appendingPathComponent("desktop.json"))
        let text = try String(contentsOf: EarshotBinary.fixtures.appendingPathComponent("headphones-on-off.jsonl"), encoding: .utf8)
        var decisions: [Decision] = []
        try EvalRunner.run(
            graph: graph, config: PolicyConfig(), hostAddresses: [BluetoothAddress("11:22:33:44:55:66")!], events: EvalScript.parse(text)
        ) { decision, _ in decisions.append(decision) }
        let decision = decisions[3]
        // As a client reads it: the status line written by the daemon, decoded.
        let line = try JSONEncoder().encode(ControlWire.Status(
            mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: nil, decision: .record(DecisionRecord(decision))))
        let status = try JSONDecoder().decode(ControlWire.Status.self, from: line)
        for (explain, detail) in [(false, DecisionText.Detail.summary), (true, .full)] {
            let lines = StatusText.render(status, explain: explain).split(separator: "\n").map(String.init)
            let expected = DecisionText.explanationLines(DecisionRecord(decision), detail: detail)
            #expect(Array(lines.suffix(expected.count)) == expected)
        }
        let full = StatusText.render(status, explain: true)
        #expect(full.contains("#1 bluez_output.AA_BB_CC_DD_EE_FF.1: worn put on 5000 ms, primary source · class-order headphones (9 of 9)"))
        #expect(full.contains("decided by worn: beats alsa_output.pci-0000_00_1f.3.analog-stereo at worn (put on 5000 ms vs not worn)"))
        #expect(!full.contains(" = "))
    }
}
