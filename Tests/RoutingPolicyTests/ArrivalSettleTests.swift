import AudioGraph
import Testing

@testable import RoutingPolicy

/// §1 `settling`: an arrival counts once it has stayed `timing.arrival-settle-ms`; a node that
/// keeps coming and going is said once and held back until it stays `timing.flap-hold-ms`.
/// The third hostile round: a USB sink created and destroyed 500 times a minute took the output
/// 1000 times.
@Suite("Arrivals settle; flapping nodes are held back")
struct ArrivalSettleTests {
    /// The speakers, configured; nothing else.
    static func engine(_ config: PolicyConfig = PolicyConfig()) -> PolicyEngine {
        var engine = PolicyEngine(graph: Sinks.graph([Sinks.speakersNode]), config: config)
        _ = engine.handle(.start, at: 0)
        return engine
    }

    /// The USB headset under a fresh id each time it appears, as PipeWire gives it.
    static func usbHeadset(_ id: ObjectID) -> Node { Sinks.node(id, Sinks.usbHeadset, ["device.bus": "usb", "device.form-factor": "headset"]) }

    /// Feeds one input, firing every timer due before it as the daemon and eval do; collects
    /// every decision.
    struct Run {
        var engine: PolicyEngine
        var decisions: [Decision] = []

        mutating func handle(_ input: PolicyInput, at now: Milliseconds) {
            advance(to: now)
            decisions.append(engine.handle(input, at: now).decision)
        }

        mutating func advance(to now: Milliseconds) {
            while let due = engine.nextDeadline, due <= now {
                decisions.append(engine.handle(.timerFired, at: due).decision)
            }
        }

        var changes: [Decision] { decisions.filter(\.changed) }
        var flapping: [FlappingNode] { decisions.flatMap(\.flapping) }
    }

    @Test("a sink that comes and goes inside the settle time changes nothing; one that stays takes the output at its end, as an arrival")
    func settle() throws {
        var run = Run(engine: Self.engine())
        run.handle(.graphChanged(.node(Self.usbHeadset(100))), at: 1000)
        let settling = try #require(run.decisions.last)
        #expect(settling.defaultSink == Sinks.speakers && !settling.changed)
        #expect(settling.rejected.first { $0.node == Sinks.usbHeadset }?.rejection == .settling(until: 1200, flapping: false))
        #expect(settling.summary == "1/2 sinks eligible: 1 settling")
        #expect(settling.why(settling.rejected[0]).contains("takes part from 1200 ms"))
        #expect(run.engine.nextDeadline == 1200)
        run.handle(.graphChanged(.removed(100)), at: 1100)
        #expect(run.engine.nextDeadline == nil, "gone before it settled: nothing pending")
        run.advance(to: 5000)
        #expect(run.changes.isEmpty)

        run.handle(.graphChanged(.node(Self.usbHeadset(101))), at: 6000)
        run.advance(to: 6200)
        let settled = try #require(run.decisions.last)
        #expect(settled.trigger == .settled(Sinks.usbHeadset))
        #expect(settled.at == 6200 && settled.defaultSink == Sinks.usbHeadset && settled.reason == .newDeviceAvailable)
        #expect(settled.decidedBy?.tier == .arrived)
        #expect(settled.ranking.first?.rank.arrivedAt == 6000, "it arrived when it appeared")
    }

    @Test("the user's own pick of a settling node takes it at once; a settle time of 0 counts arrivals at once")
    func pickAndZero() {
        var engine = Self.engine()
        _ = engine.handle(.graphChanged(.node(Self.usbHeadset(100))), at: 1000)
        #expect(engine.handle(.userSelectedDefault(Sinks.usbHeadset), at: 1010).decision.defaultSink == Sinks.usbHeadset)

        var config = PolicyConfig()
        config.arrivalSettle = 0
        engine = Self.engine(config)
        let decision = engine.handle(.graphChanged(.node(Self.usbHeadset(100))), at: 1000)
        #expect(decision.decision.defaultSink == Sinks.usbHeadset && decision.decision.trigger == .sinkAdded(Sinks.usbHeadset))
        #expect(decision.nextDeadline == nil)
    }

    @Test("500 creations a minute, each gone within 60 ms: the output never moves, and the flapping is said once")
    func hostileFlapper() {
        var run = Run(engine: Self.engine())
        var id: ObjectID = 100
        for step in 0..<500 {
            let at = Milliseconds(1000 + step * 120)
            run.handle(.graphChanged(.node(Self.usbHeadset(id))), at: at)
            run.handle(.graphChanged(.removed(id)), at: at + 60)
            id += 1
        }
        run.advance(to: 200_000)
        #expect(run.changes.isEmpty, "\(run.changes.map(\.trigger))")
        #expect(run.flapping.count == 1)
        #expect(run.flapping.first?.node == Sinks.usbHeadset && run.flapping.first?.arrivals == ArrivalGuard.flapArrivals)
        #expect(run.engine.currentDefault == Sinks.speakers)
    }

    @Test("a slower flapper (up 1 s, down 1 s) takes the output a few times, then is held back until it stays flap-hold; said once per spell")
    func slowFlapper() throws {
        var run = Run(engine: Self.engine())
        var id: ObjectID = 100
        for step in 0..<60 {  // two minutes
            let at = Milliseconds(1000 + step * 2000)
            run.handle(.graphChanged(.node(Self.usbHeadset(id))), at: at)
            run.handle(.graphChanged(.removed(id)), at: at + 1000)
            id += 1
        }
        // Five arrivals count (each settles, takes the output, leaves: two changes each);
        // from the sixth on, held back: it never stays 10 s.
        let moves = run.changes.count
        #expect(moves == 2 * (ArrivalGuard.flapArrivals - 1), "\(run.changes.map { "\($0.at) \($0.trigger)" })")
        #expect(run.flapping.count == 1)
        let held = try #require(run.decisions.first { !$0.flapping.isEmpty })
        #expect(held.rejected.first { $0.node == Sinks.usbHeadset }?.rejection == .settling(until: held.at + 10_000, flapping: true))
        #expect(held.why(held.rejected.first { $0.node == Sinks.usbHeadset }!).contains("keeps coming and going"))
        #expect(DecisionText.render(held, detail: .summary).contains("keeps coming and going (6 arrivals within"))

        // It stays: taken once it has stayed the hold.
        let last = Milliseconds(1000 + 60 * 2000)
        run.handle(.graphChanged(.node(Self.usbHeadset(id))), at: last)
        run.advance(to: last + 9_999)
        #expect(run.engine.currentDefault == Sinks.speakers)
        run.advance(to: last + 10_000)
        #expect(run.engine.currentDefault == Sinks.usbHeadset)
        #expect(run.flapping.count == 1, "still the same spell: not said again")

        // Quiet for a whole window: a new spell is said again.
        run.handle(.graphChanged(.removed(id)), at: last + 20_000)
        var next = last + 100_000
        for _ in 0..<ArrivalGuard.flapArrivals {
            id += 1
            run.handle(.graphChanged(.node(Self.usbHeadset(id))), at: next)
            run.handle(.graphChanged(.removed(id)), at: next + 50)
            next += 100
        }
        #expect(run.flapping.count == 2)
    }

    @Test("a flapping microphone is held back on the input side as a sink is on the output")
    func flappingSource() {
        var run = Run(engine: Self.engine())
        var id: ObjectID = 200
        for step in 0..<20 {
            let at = Milliseconds(1000 + step * 100)
            let microphone = InputPolicyTests.source(id, "alsa_input.usb-headset", ["device.form-factor": "headset", "device.bus": "usb"])
            run.handle(.graphChanged(.node(microphone)), at: at)
            run.handle(.graphChanged(.removed(id)), at: at + 50)
            id += 1
        }
        run.advance(to: 100_000)
        #expect(run.decisions.allSatisfy { $0.input?.changed != true || $0.trigger == .initial })
        #expect(run.flapping.map(\.direction) == [.input])
    }

    @Test("names remembered are bounded: 10 000 distinct names arriving keep at most 256")
    func boundedNames() {
        var guardian = ArrivalGuard()
        for index in 0..<10_000 {
            _ = guardian.arrive(ObjectID(index), name: "sink\(index)", at: Milliseconds(index), settle: 200, flapHold: 10_000)
            guardian.forget(ObjectID(index))
        }
        #expect(guardian.rememberedNames <= ArrivalGuard.maximumNames)
        #expect(guardian.isEmpty)
    }

    @Test("a node still settling when PipeWire comes back arrives with the new graph")
    func settlingAcrossReconnect() {
        var engine = Self.engine()
        _ = engine.handle(.graphChanged(.node(Self.usbHeadset(100))), at: 1000)
        let decision = engine.handle(.graphReplaced(Sinks.graph([Sinks.speakersNode, Self.usbHeadset(300)])), at: 1100).decision
        #expect(decision.defaultSink == Sinks.usbHeadset && decision.reason == .newDeviceAvailable)
        #expect(engine.nextDeadline == nil)
    }
}
