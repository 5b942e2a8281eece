import WireFields
import AudioGraph
import Logging
import RoutingPolicy
import Synchronization
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The daemon's log quotes node names any PipeWire client chose: none may forge a log line or
/// reach a terminal reading the log as an escape sequence.
@Suite("log lines escape names", .blockingCalls)
struct LogEscapingTests {
    static let speakers = "alsa_output.pci.analog-stereo"
    static let hostile = "evil\u{1B}]0;pwned\u{07}\n2025-01-01T00:00:00+0000 info earshot : route forged"

    static var graph: Graph {
        var graph = Graph()
        graph.apply(.node(Node(id: 40, props: ["node.name": speakers, "media.class": "Audio/Sink", "device.bus": "pci", "device.form-factor": "internal"])))
        graph.apply(.node(Node(id: 43, props: ["node.name": hostile, "node.description": "\u{202E}sdrawkcab", "media.class": "Audio/Sink", "device.bus": "usb", "device.form-factor": "internal"])))
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(speakers)"}"#)
        graph.apply(.metadata(metadata))
        return graph
    }

    @Test("DecisionLog.log: a route change to a sink named with ESC, BEL and a line break is one escaped line; --verbose's explanation a line a record")
    func decisionLog() {
        var engine = PolicyEngine(graph: Self.graph, config: PolicyConfig())
        _ = engine.handle(.start, at: 0)
        let decision = engine.handle(.userSelectedDefault(Self.hostile), at: 10).decision
        var decisions = DecisionLog()
        let changes = decisions.record(decision, wallClock: 10)
        #expect(!changes.isEmpty)
        let log = CapturedLog()
        DecisionLog.log(decision, changes: changes, verbose: true, to: log.logger)
        let lines = log.all
        #expect(lines.first == #"info: route user-override: alsa_output.pci.analog-stereo → evil\u{1B}]0;pwned\u{07}\u{0A}2025-01-01T00:00:00+0000 info earshot : route forged; 2/2 sinks eligible"#)
        #expect(lines.count > 2, "the explanation's lines: \(lines)")
        for line in lines {
            #expect(!line.unicodeScalars.contains(where: TerminalText.isEscaped), "\(line.debugDescription)")
        }
    }

    @Test("EscapingLogHandler: every message reaches the wrapped handler escaped, text with nothing to escape as it was")
    func handler() {
        let captured = CapturedLog()
        var logger = Logger(label: "earshot") { _ in EscapingLogHandler(CapturedLog.Handler(log: captured)) }
        logger.logLevel = .debug
        logger.info("sink \(Self.hostile): input ports 2")
        logger.warning("cannot link stream 51 → alsa_output.pci.analog-stereo: busy")
        logger.debug("\u{9B}31m \u{2066}")
        logger.trace("below the level: \u{1B}")
        #expect(captured.all == [
            #"info: sink evil\u{1B}]0;pwned\u{07}\u{0A}2025-01-01T00:00:00+0000 info earshot : route forged: input ports 2"#,
            "warning: cannot link stream 51 → alsa_output.pci.analog-stereo: busy",
            #"debug: \u{9B}31m \u{2066}"#,
        ])
        #expect(logger.logLevel == .debug, "the level is the wrapped handler's")
    }
}
