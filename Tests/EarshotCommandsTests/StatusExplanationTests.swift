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

/// `earshot status` with calls (§8): under `default source:`, where calls record from and each
/// stream pointed there; the text without calls is the text it always was.
@Suite(.blockingCalls)
struct StatusCallsTextTests {
    static let loopback = "bluez_input.AC:80:0A:CA:97:12"

    @Test func callsUnderTheDefaultSource() throws {
        // The real SOF laptop with a WH-1000XM5 playing A2DP (RoutingPolicyTests' CallsOnlyInputTests).
        let graph = try PwDumpDecoder.decode(contentsOf: EarshotBinary.fixtures.appendingPathComponent("real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json"))
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        engine.holdCurrentDefault()
        _ = engine.handle(.start, at: 0)
        var worn = AccessoryConfiguration(capabilities: [.audioSwitching, .placement])
        worn.placement = .inEar
        _ = engine.handle(.accessory(.register(AccessoryIdentity(parsing: "AC:80:0A:CA:97:12")!, reporter: "org.example.r", worn)), at: 10)
        let call = Node(id: 401, state: .running, props: [
            "media.class": "Stream/Input/Audio", "node.name": "softphone", "application.name": "Some Softphone", "media.role": "Communication",
            "object.serial": "5401",
        ], inputPorts: 1, outputPorts: 0)
        let decision = engine.handle(.graphChanged(.node(call)), at: 200).decision
        let calls = try #require(decision.calls)

        // As a client reads it: the status line written by the daemon, decoded.
        let written = ControlWire.Status(
            mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: nil, decision: .record(DecisionRecord(decision)), calls: calls)
        let status = try JSONDecoder().decode(ControlWire.Status.self, from: JSONEncoder().encode(written))
        #expect(status.calls == calls)
        let lines = StatusText.render(status, explain: false).split(separator: "\n").map(String.init)
        let head = try #require(lines.firstIndex { $0.hasPrefix("default source: ") })
        #expect(Array(lines[(head + 1)...].prefix(2)) == [
            "calls:          \(Self.loopback) (keeps A2DP: calls only)",
            "                stream #401 Some Softphone (Communication): media.role = Communication",
        ])
        // --explain says why the headset's input is not the default source.
        #expect(StatusText.render(status, explain: true).contains("keeps A2DP: calls only ("))

        // Without calls, the text is exactly what it was.
        var without = status
        without.calls = nil
        let plain = StatusText.render(without, explain: true).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let full = StatusText.render(status, explain: true).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(full.filter { !$0.hasPrefix("calls:") && !$0.hasPrefix("                stream #") } == plain)
        // A status from a daemon older than calls reads as none.
        let older = try JSONDecoder().decode(ControlWire.Status.self, from: Data(#"{"mode":"standalone","remote":"pipewire-0","connected":true,"session-manager":null,"decision":null,"subscribers":0,"host-addresses":[],"state":"ok"}"#.utf8))
        #expect(older.calls == nil)
    }
}
