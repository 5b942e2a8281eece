import WireFields
import RoutingPolicy
import Testing

/// docs/policy.md §4 (coming off) and §5 (user override).
struct ComingOffAndOverrideTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var config = PolicyConfig()
        var steps: [(Milliseconds, PolicyInput)]
        var winner: String?
        var testDescription: String { name }
    }

    static let hp = Sinks.headphonesAddress
    static let noGrace: PolicyConfig = {
        var config = PolicyConfig()
        config.offGrace = 0
        return config
    }()
    static let noRestore: PolicyConfig = {
        var config = noGrace
        config.restorePrevious = false
        return config
    }()

    static let cases: [Case] = [
        Case(name: "4 coming off returns to the sink that was default before",
             config: noGrace,
             steps: [(0, .userSelectedDefault(Sinks.hdmi)), (10, Requests.register(hp, placement: .offHead)),
                     (20, Requests.place(hp, .onHead)), (30, Requests.place(hp, .offHead))],
             winner: Sinks.hdmi),
        Case(name: "4 previous no longer eligible: the best remaining sink",
             config: noGrace,
             steps: [(0, .userSelectedDefault(Sinks.hdmi)), (10, Requests.register(hp, placement: .offHead)),
                     (20, Requests.place(hp, .onHead)), (25, .graphChanged(.removed(41))), (30, Requests.place(hp, .offHead))],
             winner: Sinks.headset),
        Case(name: "4 restore-previous on: back to the default the accessory took over",
             config: noGrace,
             steps: [(10, Requests.register(hp, placement: .onHead)), (15, .userSelectedDefault(Sinks.headphones)),
                     (30, Requests.place(hp, .offHead))],
             winner: Sinks.speakers),
        Case(name: "4 restore-previous off: the best remaining sink",
             config: noRestore,
             steps: [(10, Requests.register(hp, placement: .onHead)), (15, .userSelectedDefault(Sinks.headphones)),
                     (30, Requests.place(hp, .offHead))],
             winner: Sinks.headset),
        Case(name: "4 restored default holds until a sink arrives",
             config: noGrace,
             steps: [(0, .userSelectedDefault(Sinks.hdmi)), (5, .graphChanged(.removed(42))), (10, Requests.register(hp, placement: .offHead)),
                     (20, Requests.place(hp, .onHead)), (30, Requests.place(hp, .offHead)), (40, .graphChanged(.node(Sinks.usbHeadsetNode)))],
             winner: Sinks.usbHeadset),
        Case(name: "5 the user's choice is followed",
             steps: [(0, .userSelectedDefault(Sinks.hdmi))], winner: Sinks.hdmi),
        Case(name: "5 the override holds across unrelated events",
             steps: [(0, Requests.register(hp, placement: .offHead)), (5, .userSelectedDefault(Sinks.hdmi)),
                     (10, Requests.sources(hp, primary: .set(Requests.address(Sinks.host))))],
             winner: Sinks.hdmi),
        Case(name: "5 a registration bringing a worn placement Earshot did not know ends the override",
             steps: [(5, .userSelectedDefault(Sinks.hdmi)), (10, Requests.register(hp, placement: .onHead))],
             winner: Sinks.headphones),
        Case(name: "5 a re-registration repeating the known worn placement is no transition: the override holds",
             steps: [(0, Requests.register(hp, placement: .onHead)), (5, .userSelectedDefault(Sinks.hdmi)),
                     (10, Requests.register(hp, placement: .onHead))],
             winner: Sinks.hdmi),
        Case(name: "5 the override ends at the next placement transition",
             steps: [(0, Requests.register(hp, placement: .offHead)), (5, .userSelectedDefault(Sinks.hdmi)),
                     (10, Requests.place(hp, .onHead))],
             winner: Sinks.headphones),
        Case(name: "5 the override ends when a sink arrives",
             steps: [(0, .graphChanged(.removed(42))), (5, .userSelectedDefault(Sinks.hdmi)), (10, .graphChanged(.node(Sinks.usbHeadsetNode)))],
             winner: Sinks.usbHeadset),
        Case(name: "5 the last choice keeps counting after the override ends",
             steps: [(0, Requests.register(hp, placement: .offHead)), (5, .userSelectedDefault(Sinks.hdmi)),
                     (10, Requests.place(hp, .onHead)), (20, Requests.unregister(hp))],
             winner: Sinks.hdmi),
    ]

    @Test(arguments: cases)
    func winner(_ c: Case) {
        let decision = run(c.steps, config: c.config).last!
        #expect(decision.defaultSink == c.winner, "\(decision.decidedBy?.why ?? "")")
    }

    @Test func restoredSinkExplainsItself() {
        let decision = run([(0, .userSelectedDefault(Sinks.hdmi)), (10, Requests.register(Self.hp, placement: .offHead)),
                            (15, Requests.place(Self.hp, .onHead)), (20, Requests.place(Self.hp, .offHead))], config: Self.noGrace).last!
        #expect(decision.defaultSink == Sinks.hdmi)
        #expect(decision.explanation(of: decision.ranking[0]).terms.map(\.tier).contains(.restore))
        #expect(decision.decidedBy?.tier == .restore)
    }

    @Test("an override on a sink the rules leave out says which rule it sets aside, and why it holds")
    func overrideExplainsWhatItSetsAside() {
        let decision = run([(0, Requests.register(Self.hp, placement: .offHead)), (5, .userSelectedDefault(Sinks.headphones))], config: PolicyConfig()).last!
        #expect(decision.defaultSink == Sinks.headphones)
        #expect(decision.rejected.allSatisfy { $0.node != Sinks.headphones }, "not listed as rejected: it is the user's pick")
        let override = decision.explanation(of: decision.ranking[0]).terms.first { $0.tier == .override }
        #expect(override?.why.contains("it holds although §1 accessory \(Self.hp) has audio-switching and is off-head") == true, "\(override?.why ?? "-")")
    }
}
