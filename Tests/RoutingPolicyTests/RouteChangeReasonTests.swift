import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// docs/policy.md §6: every reason, from the input that produces it.
struct RouteChangeReasonTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var reason: RouteChangeReason
        var graph = Sinks.desktop
        var steps: [(Milliseconds, PolicyInput)]
        var testDescription: String { reason.rawValue }
    }

    static let hp = Sinks.headphonesAddress
    static let lonelySpeakers = Sinks.graph([Sinks.speakersNode])
    static let ignoreSpeakers: PolicyConfig = {
        var config = PolicyConfig()
        config.rules = [NodeRule(matches: [PropertyMatch(key: "device.form-factor", glob: Glob("internal"))], action: .ignore)]
        return config
    }()

    static let cases: [Case] = [
        Case(reason: .initial, graph: Sinks.graph(Sinks.all, configured: nil), steps: []),
        Case(reason: .newDeviceAvailable, graph: lonelySpeakers, steps: [(5, .graphChanged(.node(Sinks.usbHeadsetNode)))]),
        Case(reason: .oldDeviceUnavailable, steps: [(5, .graphChanged(.removed(40)))]),
        Case(reason: .placementChanged, steps: [(0, Requests.register(hp, placement: .offHead)), (5, Requests.place(hp, .onHead))]),
        Case(reason: .sourceChanged, steps: [(0, Requests.register(hp, placement: .onHead)),
                                             (5, Requests.sources(hp, primary: .set(Requests.address(Sinks.otherHost))))]),
        Case(reason: .userOverride, steps: [(5, .userSelectedDefault(Sinks.hdmi))]),
        Case(reason: .configChanged, steps: [(5, .configReplaced(ignoreSpeakers))]),
        Case(reason: .noSuitableRoute, graph: lonelySpeakers, steps: [(5, .graphChanged(.removed(40)))]),
    ]

    @Test(arguments: cases)
    func reason(_ c: Case) {
        let decision = run(c.steps, graph: c.graph).last!
        #expect(decision.changed || c.reason == .initial)
        #expect(decision.reason == c.reason)
    }

    @Test func unchangedDecisionsHaveNoReason() {
        let decision = run([(5, .graphChanged(.node(Sinks.hdmiNode)))]).last!
        #expect(!decision.changed)
        #expect(decision.reason == nil)
    }

    @Test func initialComparesWithTheConfiguredDefault() {
        let decision = run([], graph: Sinks.graph(Sinks.all, configured: Sinks.hdmi)).first!
        #expect(decision.previous == Sinks.hdmi)
        #expect(decision.defaultSink == Sinks.hdmi)
        #expect(decision.reason == .initial)
    }
}
