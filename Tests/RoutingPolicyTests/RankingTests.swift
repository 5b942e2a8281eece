import WireFields
import AudioGraph
import PolicyEval
import RoutingPolicy
import Testing

/// docs/policy.md §2: ranks compare tier by tier; the first tier that tells two sinks apart decides.
struct RankingTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var graph = Sinks.desktop
        var steps: [(Milliseconds, PolicyInput)]
        var config = PolicyConfig()
        var winner: String?
        /// The tier that must decide it against the runner-up (nil: the node name).
        var decidingTier: RankTier?
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
             winner: Sinks.hdmi, decidingTier: .override),
        Case(name: "2.1 an override holds even on a sink reported off-head (§5: a wrong sensor must not fight the user)",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .offHead)), (5, .userSelectedDefault(Sinks.headphones))],
             winner: Sinks.headphones, decidingTier: .override),
        Case(name: "2.1 an override holds even on a sink playing for another host",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.otherHost)),
                     (5, .userSelectedDefault(Sinks.headphones))],
             winner: Sinks.headphones, decidingTier: .override),
        Case(name: "2.2 a worn audio-switching accessory beats an arrived sink",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.headphonesNode]),
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead)), (5, .graphChanged(.node(Sinks.dacNode)))],
             winner: Sinks.headphones, decidingTier: .worn),
        Case(name: "2.2 the most recently put on wins",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead)), (5, Requests.register(Sinks.headsetAddress, placement: .inEar))],
             winner: Sinks.headset, decidingTier: .worn),
        Case(name: "2.2 put on at the same time: primary source this host above secondary",
             steps: [(0, Requests.register(Sinks.headphonesAddress, placement: .onHead, primary: Sinks.otherHost, secondary: Sinks.host)),
                     (0, Requests.register(Sinks.headsetAddress, placement: .onHead, primary: Sinks.host))],
             winner: Sinks.headset, decidingTier: .worn),
        Case(name: "2.3 a personal sink that arrives takes the output",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode]),
             steps: [(5, .graphChanged(.node(Sinks.usbHeadsetNode)))], winner: Sinks.usbHeadset, decidingTier: .arrived),
        Case(name: "2.3 a USB DAC that arrives is not personal (issue 19): the last choice holds",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode]),
             steps: [(5, .graphChanged(.node(Sinks.dacNode)))], winner: Sinks.speakers, decidingTier: .lastChoice),
        Case(name: "2.3 the most recently arrived wins",
             graph: Sinks.graph([Sinks.speakersNode]),
             steps: [(5, .graphChanged(.node(Sinks.dacNode))), (9, .graphChanged(.node(Sinks.headsetNode)))],
             winner: Sinks.headset, decidingTier: .arrived),
        Case(name: "2.3 HDMI arriving does not take the output",
             graph: Sinks.graph([Sinks.speakersNode]),
             steps: [(5, .graphChanged(.node(Sinks.hdmiNode)))], winner: Sinks.speakers, decidingTier: .lastChoice),
        Case(name: "2.3 sinks present at start have not arrived",
             steps: [], winner: Sinks.speakers, decidingTier: .lastChoice),
        Case(name: "2.4 a rule priority beats the user's last choice",
             steps: [], config: priority("*hdmi*", 5), winner: Sinks.hdmi, decidingTier: .rulePriority),
        Case(name: "2.4 a negative rule priority ranks below a sink without a rule",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode], configured: nil),
             steps: [], config: priority("*analog*", -5), winner: Sinks.hdmi, decidingTier: .rulePriority),
        Case(name: "2.5 the last choice beats the class order",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.dacNode]),
             steps: [], winner: Sinks.speakers, decidingTier: .lastChoice),
        Case(name: "2.4 a rule priority beats the class order",
             graph: Sinks.graph(Sinks.all, configured: nil),
             steps: [], config: priority("*hdmi*", 5), winner: Sinks.hdmi, decidingTier: .rulePriority),
        Case(name: "2.6 class order: headphones above USB above internal above HDMI",
             graph: Sinks.graph([Sinks.speakersNode, Sinks.hdmiNode, Sinks.dacNode, Sinks.headphonesNode], configured: nil),
             steps: [], winner: Sinks.headphones, decidingTier: .classOrder),
        Case(name: "2.6 internal above HDMI",
             graph: Sinks.graph([Sinks.hdmiNode, Sinks.speakersNode], configured: nil),
             steps: [], winner: Sinks.speakers, decidingTier: .classOrder),
    ]

    @Test(arguments: cases)
    func winner(_ c: Case) {
        let decision = run(c.steps, graph: c.graph, config: c.config).last!
        #expect(decision.defaultSink == c.winner)
        #expect(decision.decidedBy?.tier == c.decidingTier, "\(decision.decidedBy?.why ?? "no runner-up")")
    }

    @Test func equalRanksFallBackToTheNodeName() throws {
        let a = Sinks.node(50, "b-sink", ["device.bus": "usb"])
        let b = Sinks.node(51, "a-sink", ["device.bus": "usb"])
        let decision = run([], graph: Sinks.graph([a, b], configured: nil)).last!
        #expect(decision.ranking.map(\.node) == ["a-sink", "b-sink"])
        let decidedBy = try #require(decision.decidedBy)
        #expect(decidedBy.tier == nil && decidedBy.tierName == "name")
        #expect(decidedBy.why == #"beats b-sink at name (equal in every tier; "a-sink" sorts before "b-sink")"#)
    }

    /// Recency is compared as times, not ranks squeezed into a range: the most recent of many
    /// put-on times wins however many accessories are worn.
    @Test func putOnTimesCompareDirectly() throws {
        var nodes: [Node] = []
        var steps: [(Milliseconds, PolicyInput)] = []
        for index in 0..<150 {
            let address = String(format: "10:20:30:40:%02X:%02X", index / 256, index % 256)
            nodes.append(Sinks.node(ObjectID(100 + index), "bt-\(index)", ["device.bus": "bluetooth", "api.bluez5.address": address]))
            // One reporter per headset: a reporter may hold only so many registrations.
            steps.append((Milliseconds(index), Requests.register(address, placement: .onHead, reporter: "org.example.reporter\(index)")))
        }
        let decision = run(steps, graph: Sinks.graph(nodes, configured: nil)).last!
        #expect(decision.ranking.prefix(3).map(\.node) == ["bt-149", "bt-148", "bt-147"])
        #expect(decision.decidedBy?.why == "beats bt-148 at worn (put on 149 ms vs 148 ms)")
    }

    /// The same graph and inputs under another tier order: the config's order decides.
    @Test func tierOrderComesFromTheConfig() {
        var lastChoiceFirst = Self.priority("*hdmi*", 5)
        lastChoiceFirst.tierOrder = [.override, .restore, .worn, .arrived, .lastChoice, .rulePriority, .classOrder]
        #expect(run([], config: Self.priority("*hdmi*", 5)).last?.defaultSink == Sinks.hdmi)
        let decision = run([], config: lastChoiceFirst).last!
        #expect(decision.defaultSink == Sinks.speakers)
        #expect(decision.decidedBy?.tier == .lastChoice)
        var classFirst = PolicyConfig()
        classFirst.tierOrder = [.classOrder, .override, .restore, .worn, .arrived, .rulePriority, .lastChoice]
        let worn = run([(0, Requests.register(Sinks.hdmi, caps: [.audioSwitching, .placement], placement: .onHead))], config: classFirst).last!
        #expect(worn.defaultSink == Sinks.headphones)
        #expect(worn.decidedBy?.tier == .classOrder)
    }

    @Test func everyTermNamesItsRuleAndConfigRulesTheirLine() {
        let decision = run([], config: Self.priority("*usb*", 3)).last!
        for sink in decision.ranking {
            let explanation = decision.explanation(of: sink)
            #expect(explanation.terms.map(\.tier) == RankTier.defaultOrder.filter { tier in explanation.terms.contains { $0.tier == tier } })
            for term in explanation.terms { #expect(term.why.hasPrefix(term.tier.section + " ")) }
        }
        let dac = decision.explanation(of: decision.ranking.first { $0.node == Sinks.dac }!)
        #expect(dac.terms.first { $0.tier == .rulePriority }?.why.contains("r.toml:7") == true)
        #expect(dac.terms.first { $0.tier == .rulePriority }?.value == "priority 3")
    }

    /// Over a generated script with sinks leaving and coming back, every ranking stays sorted
    /// tier by tier (as `SinkRank.compare` says, whatever the sort uses inside), then by name,
    /// and the deciding tier is the first where the winner and the runner-up differ.
    @Test(arguments: [RankTier.defaultOrder, RankTier.defaultOrder.reversed(), [.arrived, .classOrder, .worn, .lastChoice, .override, .rulePriority, .restore]])
    func rankingStaysOrderedThroughChurn(_ tiers: [RankTier]) {
        let workload = BenchmarkWorkload(sinks: 60, events: 3000)
        var config = workload.config
        config.tierOrder = tiers
        var engine = PolicyEngine(graph: workload.graph, config: config, hostAddresses: workload.hostAddresses)
        var disorders = 0, wrongDeciders = 0, decisions = 0
        PolicyRun.run(&engine, inputs: workload.inputs) { decision, _ in
            decisions += 1
            for (a, b) in zip(decision.ranking, decision.ranking.dropFirst()) {
                switch SinkRank.firstDifference(a.rank, b.rank, order: tiers)?.order {
                case .lower?: disorders += 1
                case nil where a.node > b.node: disorders += 1
                default: break
                }
            }
            if decision.ranking.count >= 2,
                decision.decidedBy?.tier != SinkRank.firstDifference(decision.ranking[0].rank, decision.ranking[1].rank, order: tiers)?.tier
            {
                wrongDeciders += 1
            }
        }
        #expect(decisions > 3000)
        #expect(disorders == 0)
        #expect(wrongDeciders == 0)
    }
}
