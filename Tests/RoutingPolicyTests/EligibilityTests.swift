import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// docs/policy.md §1: which sinks are out, and that each says why.
struct EligibilityTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var steps: [(Milliseconds, PolicyInput)]
        var config = PolicyConfig()
        var hosts = [Sinks.host]
        /// node → rejection kind, for the last decision.
        var rejected: [String: String]
        var testDescription: String { name }
    }

    static let ignoreHDMI: PolicyConfig = {
        var config = PolicyConfig()
        config.rules = [NodeRule(matches: [PropertyMatch(key: "node.name", glob: Glob("*hdmi*"))], action: .ignore, location: SourceLocation(file: "t.toml", line: 3, column: 1))]
        return config
    }()

    static let staticManualOnly: PolicyConfig = {
        var config = PolicyConfig()
        var entry = StaticAccessory()
        entry.bus = "usb"
        entry.capabilities = []
        config.accessories = [entry]
        return config
    }()

    static let cases: [Case] = [
        Case(name: "nothing registered: every sink eligible", steps: [], rejected: [:]),
        Case(name: "a rule ignores a sink", steps: [], config: ignoreHDMI, rejected: [Sinks.hdmi: "ignored"]),
        Case(name: "audio-switching accessory off-head is out",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .offHead))],
             rejected: [Sinks.headphones: "off-head"]),
        Case(name: "off-head without audio-switching is manual-only, not off-head",
             steps: [(0, Requests.register(Sinks.headphonesAddress, caps: [.placement], placement: .offHead))],
             rejected: [Sinks.headphones: "manual-only"]),
        Case(name: "sources set, none is this host: playing for another host",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.otherHost))],
             rejected: [Sinks.headphones: "other-host"]),
        Case(name: "this host as secondary source keeps it eligible",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.otherHost, secondary: Sinks.host))],
             rejected: [:]),
        Case(name: "no host address known: set sources mean another host",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.host))],
             hosts: [], rejected: [Sinks.headphones: "other-host"]),
        Case(name: "no sources set: eligible",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead))], rejected: [:]),
        Case(name: "registered without audio-switching: only the user chooses it",
             steps: [(0, Requests.register(Sinks.headsetAddress, caps: []))], rejected: [Sinks.headset: "manual-only"]),
        Case(name: "static accessory without audio-switching: manual-only", steps: [], config: staticManualOnly,
             rejected: [Sinks.dac: "manual-only"]),
        Case(name: "the user may choose a manual-only sink",
             steps: [(0, Requests.register(Sinks.headsetAddress, caps: [])), (10, .userSelectedDefault(Sinks.headset))],
             rejected: [:]),
        Case(name: "a removed default is gone",
             steps: [(0, .graphChanged(.removed(40)))], rejected: [Sinks.speakers: "gone"]),
    ]

    @Test(arguments: cases)
    func rejection(_ c: Case) {
        let decision = run(c.steps, config: c.config, hosts: c.hosts).last!
        let kinds = Dictionary(uniqueKeysWithValues: decision.rejected.map { ($0.node, $0.rejection.kind) })
        #expect(kinds == c.rejected)
        for sink in decision.rejected { #expect(decision.why(sink).hasPrefix("§1 ")) }
        #expect(decision.ranking.count + decision.rejected.count >= 5)
    }

    @Test func summaryCountsRejectionsByKind() {
        var config = Self.ignoreHDMI
        config.onDelay = 0
        let decision = run([
            (0, Requests.register(Sinks.headphonesAddress, placement: .offHead)),
            (0, Requests.register(Sinks.headsetAddress, placement: .offHead)),
        ], config: config).last!
        #expect(decision.summary == "2/5 sinks eligible: 2 off-head, 1 ignored")
    }

    @Test func otherHostReasonSaysHowToFixMissingHostAddress() {
        let decision = run([(0, Requests.register(Sinks.headphonesAddress, primary: Sinks.host))], hosts: []).last!
        let why = decision.why(decision.rejected.first { $0.node == Sinks.headphones }!)
        #expect(why.contains("--host-address"))
    }
}
