import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// One door for graph changes (docs/policy.md, Inputs): changes that cannot affect a decision
/// come back unchanged, without ranking; the rest are decided as before.
struct EngineDoorTests {
    static let stream = Node(id: 60, state: .running, props: ["node.name": "mpv", "media.class": "Stream/Output/Audio", "object.serial": "1060"])

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var change: GraphChange
        var unchanged: Bool
        var testDescription: String { name }
    }

    static var sinkRunning: Node {
        var node = Sinks.speakersNode
        node.state = .running
        return node
    }

    static var sinkWithNewFormFactor: Node {
        var node = Sinks.speakersNode
        node.props["device.form-factor"] = "headphone"
        return node
    }

    static var sinkWithNewDescription: Node {
        var node = Sinks.speakersNode
        node.props["node.description"] = "Speakers"
        return node
    }

    static let cases: [Case] = [
        Case(name: "a port", change: .port(Port(id: 70, direction: .input, props: ["node.id": "40", "audio.channel": "FL"])), unchanged: true),
        Case(name: "a link", change: .link(Link(id: 71, outputNode: 60, outputPort: 72, inputNode: 40, inputPort: 70)), unchanged: true),
        Case(name: "a client", change: .client(Client(id: 73, props: ["application.name": "mpv"])), unchanged: true),
        Case(name: "removing a port", change: .removed(70), unchanged: true),
        Case(name: "a playback stream", change: .node(stream), unchanged: true),
        Case(name: "removing a stream", change: .removed(60), unchanged: true),
        Case(name: "a sink's state", change: .node(sinkRunning), unchanged: true),
        Case(name: "a sink property ranking does not read", change: .node(sinkWithNewDescription), unchanged: true),
        Case(name: "another metadata key", change: .metadataProperty(metadata: 30, subject: 0, key: "default.video.source", type: nil, value: "{}"), unchanged: true),
        Case(name: "the default source key", change: .metadataProperty(metadata: 30, subject: 0, key: "default.audio.source", type: nil, value: "{}"), unchanged: false),
        Case(name: "a stream's target in the default metadata", change: .metadataProperty(metadata: 30, subject: 60, key: "target.object", type: nil, value: "x"), unchanged: true),
        Case(name: "another metadata object", change: .metadata(Metadata(id: 31, props: ["metadata.name": "settings"])), unchanged: true),
        Case(name: "a device without sinks", change: .device(Device(id: 80, props: ["device.name": "alsa_card.usb-mic", "device.bus": "usb"])), unchanged: true),
        Case(name: "the configured default key", change: .metadataProperty(metadata: 30, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"x"}"#), unchanged: false),
        Case(name: "a sink property ranking reads", change: .node(sinkWithNewFormFactor), unchanged: false),
        Case(name: "a new sink", change: .node(Sinks.node(45, "new-sink", ["device.bus": "usb"])), unchanged: false),
        Case(name: "removing a sink", change: .removed(40), unchanged: false),
        Case(name: "the default metadata removed", change: .removed(30), unchanged: false),
    ]

    @Test(arguments: cases)
    func graphChange(_ c: Case) {
        var engine = Self.engine()
        let before = engine.handle(.start, at: 0).decision
        let outcome = engine.handle(.graphChanged(c.change), at: 10)
        #expect(outcome.isUnchanged == c.unchanged)
        #expect((outcome.decided == nil) == c.unchanged)
        #expect(outcome.decision.at == 10)
        guard c.unchanged else { return }
        // The restated decision is what ranking would have said: compare with a real ranking.
        #expect(outcome.decision.ranking == before.ranking && outcome.decision.rejected == before.rejected)
        #expect(!outcome.decision.changed && outcome.decision.reason == nil)
        let ranked = engine.handle(.timerFired, at: 11)
        #expect(!ranked.isUnchanged)
        #expect(ranked.decision.ranking == outcome.decision.ranking && ranked.decision.defaultSink == outcome.decision.defaultSink)
    }

    @Test func aDeviceChangeThatMovesItsSinkIsDecided() {
        var graph = Sinks.graph([Sinks.speakersNode])
        graph.apply(.device(Device(id: 90, props: ["device.name": "bluez_card.X", "device.form-factor": "speaker"])))
        var sink = Sinks.node(46, "bt-sink", [:])
        sink.props["device.id"] = "90"
        graph.apply(.node(sink))
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        _ = engine.handle(.start, at: 0)
        // The same device again: nothing.
        #expect(engine.handle(.graphChanged(.device(Device(id: 90, props: ["device.name": "bluez_card.X", "device.form-factor": "speaker"]))), at: 1).isUnchanged)
        // Its form factor changes its sink's class: decided.
        let outcome = engine.handle(.graphChanged(.device(Device(id: 90, props: ["device.name": "bluez_card.X", "device.form-factor": "headphone"]))), at: 2)
        #expect(!outcome.isUnchanged)
        #expect(outcome.decision.ranking.first { $0.node == "bt-sink" }?.rank.sinkClass == .headphones)
        // The device goes: its sink falls back to its own properties.
        #expect(!engine.handle(.graphChanged(.removed(90)), at: 3).isUnchanged)
    }

    /// Before the first decision there is nothing to restate: the input is decided.
    @Test func beforeTheFirstDecisionEverythingIsDecided() {
        var engine = Self.engine()
        let outcome = engine.handle(.graphChanged(.port(Port(id: 70, direction: .input))), at: 0)
        #expect(!outcome.isUnchanged)
        #expect(outcome.decision.defaultSink == Sinks.speakers)
    }

    /// A burst of port and link events as a stream switch makes: none of them ranks, and the
    /// decisions an eval or daemon reports are those of the decided inputs only.
    @Test func aSwitchBurstRanksOnce() {
        var engine = Self.engine()
        _ = engine.handle(.start, at: 0)
        var decided = 0
        for index in 0..<200 {
            let id = ObjectID(1000 + index)
            let change: GraphChange = index % 2 == 0
                ? .port(Port(id: id, direction: .output, props: ["node.id": "60"]))
                : .link(Link(id: id, outputNode: 60, outputPort: id - 1, inputNode: 40, inputPort: 70))
            if !engine.handle(.graphChanged(change), at: Milliseconds(index)).isUnchanged { decided += 1 }
        }
        if !engine.handle(.userSelectedDefault(Sinks.hdmi), at: 300).isUnchanged { decided += 1 }
        #expect(decided == 1)
        #expect(engine.currentDefault == Sinks.hdmi)
    }

    static func engine() -> PolicyEngine {
        var graph = Sinks.desktop
        graph.apply(.node(stream))
        return PolicyEngine(graph: graph, config: PolicyConfig())
    }
}
