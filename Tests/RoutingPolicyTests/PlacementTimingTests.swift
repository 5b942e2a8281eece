import WireFields
import RoutingPolicy
import Testing

/// docs/policy.md §3: on-delay, off-grace, and flaps inside them.
struct PlacementTimingTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var onDelay: Milliseconds
        var offGrace: Milliseconds
        var steps: [(Milliseconds, PolicyInput)]
        /// (at, trigger, default) of every decision after the initial one.
        var expected: [(Milliseconds, String, String?)]
        var testDescription: String { name }
    }

    static let headphones = Sinks.headphonesAddress
    static let register = Requests.register(headphones, placement: .offHead)

    static let cases: [Case] = [
        Case(name: "on-delay 0 switches at once", onDelay: 0, offGrace: 400,
             steps: [(0, register), (1000, Requests.place(headphones, .onHead))],
             expected: [(0, "register \(headphones)", Sinks.speakers), (1000, "update \(headphones)", Sinks.headphones)]),
        Case(name: "going on waits for on-delay", onDelay: 300, offGrace: 400,
             steps: [(0, register), (1000, Requests.place(headphones, .inEar))],
             expected: [(0, "register \(headphones)", Sinks.speakers), (1000, "update \(headphones)", Sinks.speakers),
                        (1300, "on-delay \(headphones)", Sinks.headphones)]),
        Case(name: "coming off waits for off-grace", onDelay: 0, offGrace: 400,
             steps: [(0, register), (1000, Requests.place(headphones, .onHead)), (2000, Requests.place(headphones, .offHead))],
             expected: [(0, "register \(headphones)", Sinks.speakers), (1000, "update \(headphones)", Sinks.headphones),
                        (2000, "update \(headphones)", Sinks.headphones), (2400, "off-grace \(headphones)", Sinks.speakers)]),
        Case(name: "a flap inside the grace changes nothing", onDelay: 0, offGrace: 400,
             steps: [(0, register), (1000, Requests.place(headphones, .onHead)), (2000, Requests.place(headphones, .offHead)),
                     (2200, Requests.place(headphones, .onHead))],
             expected: [(0, "register \(headphones)", Sinks.speakers), (1000, "update \(headphones)", Sinks.headphones),
                        (2000, "update \(headphones)", Sinks.headphones), (2200, "update \(headphones)", Sinks.headphones)]),
        Case(name: "a flap inside the on-delay changes nothing", onDelay: 300, offGrace: 400,
             steps: [(0, register), (1000, Requests.place(headphones, .onHead)), (1100, Requests.place(headphones, .offHead))],
             expected: [(0, "register \(headphones)", Sinks.speakers), (1000, "update \(headphones)", Sinks.speakers),
                        (1100, "update \(headphones)", Sinks.speakers)]),
        Case(name: "in-ear to on-head is no transition", onDelay: 300, offGrace: 400,
             steps: [(0, Requests.register(headphones, placement: .inEar)), (1000, Requests.place(headphones, .onHead))],
             expected: [(0, "register \(headphones)", Sinks.headphones), (1000, "update \(headphones)", Sinks.headphones)]),
        Case(name: "a timer due at an event's time fires first", onDelay: 0, offGrace: 400,
             steps: [(0, Requests.register(headphones, placement: .onHead)), (100, Requests.place(headphones, .offHead)),
                     (500, Requests.place(headphones, .onHead))],
             expected: [(0, "register \(headphones)", Sinks.headphones), (100, "update \(headphones)", Sinks.headphones),
                        (500, "off-grace \(headphones)", Sinks.speakers), (500, "update \(headphones)", Sinks.headphones)]),
    ]

    @Test(arguments: cases)
    func timeline(_ c: Case) {
        var config = PolicyConfig()
        config.onDelay = c.onDelay
        config.offGrace = c.offGrace
        let decisions = run(c.steps, config: config).dropFirst()
        let actual = decisions.map { "\($0.at) \($0.trigger) \($0.defaultSink ?? "-")" }
        #expect(actual == c.expected.map { "\($0.0) \($0.1) \($0.2 ?? "-")" })
    }

    @Test func nextDeadlineIsReportedAndClearedByAFlap() {
        var config = PolicyConfig()
        config.offGrace = 400
        var engine = PolicyEngine(graph: Sinks.desktop, config: config, hostAddresses: [])
        _ = engine.handle(.start, at: 0)
        _ = engine.handle(Requests.register(Self.headphones, placement: .onHead), at: 0)
        #expect(engine.handle(Requests.place(Self.headphones, .offHead), at: 10).nextDeadline == 410)
        #expect(engine.handle(Requests.place(Self.headphones, .onHead), at: 20).nextDeadline == nil)
    }
}
