import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// The timeline model of `earshot eval --format svg`: lanes, spans and markers of a scripted run.
struct TimelineTests {
    static let script = """
        {"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"off-head"}}
        {"at":1000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}
        {"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"}}
        {"at":7000,"select":{"node":"alsa_output.pci-0000_00_1f.3.hdmi-stereo"}}
        {"at":8000,"remove":{"node":"alsa_output.usb-FiiO_K3-00.analog-stereo"}}
        {"at":9000,"add":{"id":99,"type":"PipeWire:Interface:Node","info":{"props":{"node.name":"alsa_output.usb-New-00.analog-stereo","media.class":"Audio/Sink","device.bus":"usb"}}}}
        """

    static func run(_ script: String = script, config: PolicyConfig = PolicyConfig()) throws -> Timeline {
        var builder = TimelineBuilder()
        try EvalRunner.run(graph: Sinks.desktop, config: config, hostAddresses: [], events: EvalScript.parse(script)) { decision, event in
            builder.record(decision, event: event)
        }
        return builder.finish()
    }

    @Test func spansFollowTheDefaultWithTheOffGrace() throws {
        let timeline = try Self.run()
        let grace = PolicyConfig().offGrace
        #expect(timeline.start == 0)
        let speakers = try #require(timeline.lane(named: Sinks.speakers))
        let headphones = try #require(timeline.lane(named: Sinks.headphones))
        let hdmi = try #require(timeline.lane(named: Sinks.hdmi))
        #expect(speakers.spans.map { [$0.start, $0.end] } == [[0, 1000], [5000 + grace, 7000]])
        #expect(headphones.spans.map { [$0.start, $0.end] } == [[1000, 5000 + grace]])
        #expect(headphones.spans.first?.reason == "placement-changed")
        #expect(speakers.spans.first?.reason == "initial")
        #expect(hdmi.spans.first?.start == 7000)
        #expect(hdmi.spans.first?.reason == "user-override")
        // The last holder's span is closed at the end of the run, a tail after the last decision.
        let last = try #require(timeline.lanes.compactMap(\.spans.last).max { $0.end < $1.end })
        #expect(last.end == timeline.end)
        #expect(timeline.end > 9000)
        // Spans never overlap: one default at a time.
        let all = timeline.lanes.flatMap(\.spans).sorted { $0.start < $1.start }
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.end <= $1.start })
        #expect(timeline.lanes.first?.name == Sinks.speakers, "lanes in the order they appear")
        #expect(timeline.switches.map(\.at).prefix(4) == [0, 1000, 5000 + grace, 7000])
        #expect(timeline.switches.map(\.reason).prefix(4) == ["initial", "placement-changed", "placement-changed", "user-override"])
    }

    @Test func markersOfEveryKindLandOnTheirSinksLane() throws {
        let timeline = try Self.run()
        let headphones = try #require(timeline.lane(named: Sinks.headphones))
        // The accessory's reports and its off-grace running out, on its bluez sink's lane.
        #expect(headphones.markers.map(\.at) == [0, 1000, 5000, 5400])
        #expect(headphones.markers.allSatisfy { $0.kind == .placement })
        #expect(headphones.markers[1].text == "AA:BB:CC:DD:EE:FF on-head")
        #expect(headphones.markers[3].text == "AA:BB:CC:DD:EE:FF off-grace ran out")
        #expect(headphones.markers.map(\.worn) == [false, true, false, false])
        #expect(timeline.lane(named: Sinks.hdmi)?.markers.map(\.kind) == [.userOverride])
        #expect(timeline.lane(named: Sinks.dac)?.markers.map(\.kind) == [.sinkRemoved])
        #expect(timeline.lane(named: "alsa_output.usb-New-00.analog-stereo")?.markers.map(\.kind) == [.sinkArrived])
        #expect(timeline.lane(named: Sinks.dac)?.spans.isEmpty == true, "a lane for a sink that only had markers")
    }

    /// JSON records (`--format json`, decoded) give the same timeline as the decisions, and the
    /// timers are recognised from their trigger even without the script's events.
    @Test func recordsGiveTheSameTimelineAsDecisions() throws {
        var fromDecisions = TimelineBuilder()
        var fromRecords = TimelineBuilder()
        var recordsAlone = TimelineBuilder()
        try EvalRunner.run(graph: Sinks.desktop, config: PolicyConfig(), hostAddresses: [], events: EvalScript.parse(Self.script)) { decision, event in
            fromDecisions.record(decision, event: event)
            let record = try? JSONDecoder().decode(DecisionRecord.self, from: Data(DecisionRecord(decision).jsonLine.utf8))
            guard let record else { return }
            fromRecords.record(TimelineStep(record, event: event))
            recordsAlone.record(TimelineStep(record, event: nil))
        }
        #expect(fromRecords.finish() == fromDecisions.finish())
        let alone = recordsAlone.finish()
        #expect(alone.lane(named: Sinks.headphones)?.spans == fromDecisions.finish().lane(named: Sinks.headphones)?.spans)
        #expect(alone.lane(named: Sinks.headphones)?.markers.map(\.text) == ["AA:BB:CC:DD:EE:FF off-grace ran out"])
    }

    @Test func anAccessoryWithoutASinkGetsALaneOfItsOwn() throws {
        let timeline = try Self.run(#"{"at":0,"register":{"accessory":"12:34:56:78:9A:BC","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"in-ear"}}"#)
        #expect(timeline.lane(named: "accessory 12:34:56:78:9A:BC")?.markers.map(\.text) == ["12:34:56:78:9A:BC in-ear"])
    }

    @Test func refusedRequestsMarkNothing() throws {
        let timeline = try Self.run(#"{"at":10,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}"#)
        #expect(timeline.lanes.allSatisfy { $0.markers.isEmpty })
        #expect(timeline.lanes.map(\.name) == [Sinks.speakers])
        #expect(timeline.lanes[0].spans.map { [$0.start, $0.end] } == [[0, 1010]])
    }

    @Test func noDefaultLeavesAGap() {
        let timeline = TimelineBuilder.build([
            TimelineStep(at: 0, defaultSink: "a", previous: nil, reason: "initial", cause: .other),
            TimelineStep(at: 100, defaultSink: nil, previous: "a", reason: "no-suitable-route", cause: .remove(node: "a")),
            TimelineStep(at: 300, defaultSink: "b", previous: nil, reason: "new-device-available", cause: .add(node: "b")),
        ])
        #expect(timeline.lane(named: "a")?.spans.map { [$0.start, $0.end] } == [[0, 100]])
        #expect(timeline.lane(named: "b")?.spans.map { [$0.start, $0.end] } == [[300, 1300]])
        #expect(timeline.switches.map(\.to) == ["a", nil, "b"])
    }

    @Test func markersAreCappedPerLaneAndCounted() {
        var steps = [TimelineStep(at: 0, defaultSink: "a", previous: nil, reason: "initial", cause: .other)]
        for index in 1...500 {
            steps.append(TimelineStep(at: Milliseconds(index), defaultSink: "a", previous: "a", reason: nil, cause: .select(node: "a")))
        }
        let timeline = TimelineBuilder.build(steps, limits: Timeline.Limits(markersPerLane: 50))
        #expect(timeline.lane(named: "a")?.markers.count == 50)
        #expect(timeline.lane(named: "a")?.omittedMarkers == 450)
        #expect(timeline.omittedMarkers == 450)
        // Evenly spread over the run, the first and the last kept.
        #expect(timeline.lane(named: "a")?.markers.first?.at == 1)
        #expect(timeline.lane(named: "a")?.markers.last?.at == 500)
    }

    @Test func lanesAreCappedKeepingTheLongestHolders() {
        var steps: [TimelineStep] = []
        for index in 0..<10 {
            // Sink i holds the default for i+1 ms.
            steps.append(TimelineStep(at: Milliseconds(index * (index + 1) / 2), defaultSink: "s\(index)", previous: index == 0 ? nil : "s\(index - 1)", reason: "x", cause: .other))
        }
        let timeline = TimelineBuilder.build(steps, limits: Timeline.Limits(lanes: 3))
        #expect(timeline.lanes.map(\.name) == ["s7", "s8", "s9"])
        #expect(timeline.omittedLanes.count == 7)
    }

    @Test func labelsAreShortenedSensibly() {
        #expect(Timeline.shortLabel("alsa_output.pci-0000_00_1f.3.analog-stereo") == "pci-0000_00_1f.3.analog-stereo")
        #expect(Timeline.shortLabel("bluez_output.AA_BB_CC_DD_EE_FF.1") == "AA_BB_CC_DD_EE_FF.1")
        #expect(Timeline.shortLabel("speakers") == "speakers")
        let long = Timeline.shortLabel("alsa_output.usb-Focusrite_Scarlett_2i2_USB_Y8E4R1234567-00.analog-stereo")
        #expect(long.count == 30)
        #expect(long.hasPrefix("usb-Focusrite") && long.hasSuffix("analog-stereo") && long.contains("…"))
    }

    @Test func ticksAreReadableForEverySpan() {
        #expect(TimeTicks.ticks(from: 0, to: 800).map(\.label) == ["0", "100 ms", "200 ms", "300 ms", "400 ms", "500 ms", "600 ms", "700 ms", "800 ms"])
        #expect(TimeTicks.ticks(from: 0, to: 13_000).map(\.label) == ["0", "2 s", "4 s", "6 s", "8 s", "10 s", "12 s"])
        #expect(TimeTicks.ticks(from: 0, to: 20 * 60_000).map(\.label).last == "20 min")
        #expect(TimeTicks.ticks(from: 0, to: 9 * 3_600_000).map(\.label) == ["0", "1 h", "2 h", "3 h", "4 h", "5 h", "6 h", "7 h", "8 h", "9 h"])
        #expect(TimeTicks.ticks(from: 0, to: 30 * 86_400_000).map(\.label).last == "30 d")
        #expect(TimeTicks.ticks(from: 0, to: EvalScript.maxAt).count <= 11)
        #expect(TimeTicks.ticks(from: 1500, to: 1800).first?.at == 1500)
    }
}
