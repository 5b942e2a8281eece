import AudioGraph
import RoutingPolicy
import Testing

/// design.md §Policy semantics 2: the first rule that tells two sinks apart decides.
struct RankingTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var graph = Sinks.desktop
        var steps: [(Milliseconds, PolicyInput)]
        var config = PolicyConfig()
        var winner: String?
        /// The term that must decide it, present on the winner.
        var decidingTerm: String
        var testDescription: String { name }
    }

    static func priority(_ glob: String, _ value: Int) -> PolicyConfig {
        var config = PolicyConfig()
        config.rules = [NodeRule(matches: [PropertyMatch(key: "node.name", glob: Glob(glob))], action: .priority(value), location: SourceLocation(file: "r.toml", line: 7, column: 1))]
        return config
    }

    static let cases: [Case] = [
        Case(name: "2.1 an override on an eligible sink beats a worn accessory",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead)), (5, .userSelectedDefault(Sinks.hdmi))],
             winner: Sinks.hdmi, decidingTerm: "user-override"),
        Case(name: "2.1 an override on an ineligible sink does not count",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .offHead)), (5, .userSelectedDefault(Sinks.headphones))],
             winner: Sinks.headset, decidingTerm: "class-order"),
        Case(name: "2.2 a worn audio-switching accessory beats an arrived sink",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.headphonesNode]),
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead)), (5, .graphChanged(.node(Sinks.dacNode)))],
             winner: Sinks.headphones, decidingTerm: "worn"),
        Case(name: "2.2 the most recently put on wins",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead)), (5, Requests.register(Sinks.headsetAddress, placement: .inEar))],
             winner: Sinks.headset, decidingTerm: "worn"),
        Case(name: "2.2 put on at the same time: primary source this host above secondary",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.otherHost, secondary: Sinks.host)),
                     (0, Requests.register(Sinks.headsetAddress, placement: .onHead, primary: Sinks.host))],
             winner: Sinks.headset, decidingTerm: "primary-source"),
        Case(name: "2.3 a personal sink that arrives takes the output",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode]),
             steps: [(5, .graphChanged(.node(Sinks.dacNode)))], winner: Sinks.dac, decidingTerm: "arrival"),
        Case(name: "2.3 the most recently arrived wins",
             graph: Sinks.graph([Sinks.speakersNode]),
             steps: [(5, .graphChanged(.node(Sinks.dacNode))), (9, .graphChanged(.node(Sinks.headsetNode)))],
             winner: Sinks.headset, decidingTerm: "arrival"),
        Case(name: "2.3 HDMI arriving does not take the output",
             graph: Sinks.graph([Sinks.speakersNode]),
             steps: [(5, .graphChanged(.node(Sinks.hdmiNode)))], winner: Sinks.speakers, decidingTerm: "last-choice"),
        Case(name: "2.3 sinks present at start have not arrived",
             steps: [], winner: Sinks.speakers, decidingTerm: "last-choice"),
        Case(name: "2.4 the user's last choice beats rule priorities",
             steps: [], config: priority("*hdmi*", 1000), winner: Sinks.speakers, decidingTerm: "last-choice"),
        Case(name: "2.5 a rule priority beats the class order",
             graph: Sinks.graph(Sinks.all, configured: nil),
             steps: [], config: priority("*hdmi*", 5), winner: Sinks.hdmi, decidingTerm: "rule-priority"),
        Case(name: "2.6 class order: headphones above USB above internal above HDMI",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode, Sinks.dacNode, Sinks.headphonesNode], configured: nil),
             steps: [], winner: Sinks.headphones, decidingTerm: "class-order"),
        Case(name: "2.6 internal above HDMI",
             graph: Sinks.graph([Sinks.hdmiNode, Sinks.speakersNode], configured: nil),
             steps: [], winner: Sinks.speakers, decidingTerm: "class-order"),
    ]

    @Test(arguments: cases)
    func winner(_ c: Case) {
        let decision = run(c.steps, graph: c.graph, config: c.config).last!
        #expect(decision.defaultSink == c.winner)
        let top = decision.ranking.first.map(decision.explanation(of:))
        #expect(top?.terms.contains { $0.name == c.decidingTerm } == true, "\(top?.sumText ?? "none")")
    }

    @Test func equalScoresFallBackToTheNodeName() {
        let a = Sinks.node(50, "b-sink", ["device.bus": "usb"])
        let b = Sinks.node(51, "a-sink", ["device.bus": "usb"])
        let decision = run([], graph: Sinks.graph([a, b], configured: nil)).last!
        #expect(decision.ranking.map(\.node) == ["a-sink", "b-sink"])
    }

    @Test func everyTermNamesItsRuleAndConfigRulesTheirLine() {
        let decision = run([], config: Self.priority("*usb*", 3)).last!
        for sink in decision.ranking {
            let explanation = decision.explanation(of: sink)
            #expect(explanation.total == explanation.terms.map(\.value).reduce(0, +))
            for term in explanation.terms { #expect(term.why.hasPrefix("§2.")) }
        }
        let dac = decision.explanation(of: decision.ranking.first { $0.node == Sinks.dac }!)
        #expect(dac.terms.first { $0.name == "rule-priority" }?.why.contains("r.toml:7") == true)
    }

    /// Over a generated script with sinks leaving and coming back, every ranking stays sorted by
    /// score, then name, and every winner's terms add up to its score.
    @Test func rankingStaysOrderedThroughChurn() {
        let workload = BenchmarkWorkload(sinks: 60, events: 3000)
        var engine = PolicyEngine(graph: workload.graph, config: workload.config, hostAddresses: workload.hostAddresses)
        var disorders = 0, badSums = 0, decisions = 0
        PolicyRun.run(&engine, inputs: workload.inputs) { decision, _ in
            decisions += 1
            for (a, b) in zip(decision.ranking, decision.ranking.dropFirst()) where a.total < b.total || (a.total == b.total && a.node > b.node) {
                disorders += 1
            }
            if let winner = decision.ranking.first, decision.explanation(of: winner).terms.map(\.value).reduce(0, +) != winner.total {
                badSums += 1
            }
        }
        #expect(decisions > 3000)
        #expect(disorders == 0)
        #expect(badSums == 0)
    }
}
