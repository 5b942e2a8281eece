import AudioGraph
import Logging
import RoutingPolicy
import Testing

@testable import EarshotDaemon

/// The one symptom of a lost pick the daemon reads the metadata afresh for (issue 28): the
/// effective default leaving a configured sink that is still there. Every other move has a
/// reason of WirePlumber's own, and a reread (a bind) would cost other clients their events.
struct MetadataResyncTests {
    static let speakers = "alsa_output.pci.analog-stereo"
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"

    static func graph(configured: String?, sinks: [String] = [speakers, headphones]) -> Graph {
        var graph = Graph()
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        if let configured {
            metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: configured))
        }
        graph.apply(.metadata(metadata))
        for (offset, name) in sinks.enumerated() {
            graph.apply(.node(Node(id: ObjectID(40 + offset), props: ["node.name": name, "media.class": "Audio/Sink", "object.serial": String(540 + offset)])))
        }
        return graph
    }

    static func effective(_ name: String?, key: String = Graph.effectiveSinkKey) -> GraphChange {
        .metadataProperty(metadata: 30, subject: 0, key: key, type: "Spa:String:JSON", value: name.map(MetadataEntry.json(name:)))
    }

    static func suspects(after change: GraphChange, in graph: Graph) -> [MetadataResync.Suspect] {
        let resync = MetadataResync()
        var graph = graph
        graph.apply(change)
        let turn = GraphTurn(graph: graph, session: GraphSession(logger: Logger(label: "test")), currentDefault: nil, currentSource: nil, now: 0)
        #expect(resync.graphDidChange(change, in: turn) == nil, "it never makes a pick itself")
        return resync.takeSuspects()
    }

    @Test("the effective default leaving a configured sink that is still there: a possible lost pick, once")
    func leavingAnExistingConfiguredSink() {
        let found = Self.suspects(after: Self.effective(Self.headphones), in: Self.graph(configured: Self.speakers))
        #expect(found == [MetadataResync.Suspect(metadata: 30, direction: .output)])
    }

    @Test("the same for the default source")
    func source() {
        var graph = Self.graph(configured: nil)
        var metadata = graph.metadata[30]!
        metadata.set(subject: 0, key: Graph.configuredSourceKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: Self.speakers))
        graph.apply(.metadata(metadata))
        let found = Self.suspects(after: Self.effective(Self.headphones, key: Graph.effectiveSourceKey), in: graph)
        #expect(found == [MetadataResync.Suspect(metadata: 30, direction: .input)])
    }

    @Test("moves WirePlumber has a reason for are not suspects: to the configured sink, none configured, the configured sink gone, the default unset")
    func explainedMoves() {
        #expect(Self.suspects(after: Self.effective(Self.speakers), in: Self.graph(configured: Self.speakers)).isEmpty)
        #expect(Self.suspects(after: Self.effective(Self.headphones), in: Self.graph(configured: nil)).isEmpty)
        #expect(Self.suspects(after: Self.effective(Self.headphones), in: Self.graph(configured: Self.speakers, sinks: [Self.headphones])).isEmpty)
        // A configured key that is no JSON name is no configured sink.
        var graph = Self.graph(configured: nil)
        var metadata = graph.metadata[30]!
        metadata.set(subject: 0, key: Graph.configuredSinkKey, type: nil, value: "garbage")
        graph.apply(.metadata(metadata))
        #expect(Self.suspects(after: Self.effective(Self.headphones), in: graph).isEmpty)
    }

    @Test("other metadata, other keys and other subjects are not looked at; suspects are taken once")
    func otherChanges() {
        let graph = Self.graph(configured: Self.speakers)
        #expect(Self.suspects(after: .metadataProperty(metadata: 30, subject: 0, key: "other.key", type: nil, value: "x"), in: graph).isEmpty)
        #expect(Self.suspects(after: .metadataProperty(metadata: 30, subject: 44, key: Graph.effectiveSinkKey, type: nil, value: "x"), in: graph).isEmpty)
        #expect(Self.suspects(after: .metadataProperty(metadata: 99, subject: 0, key: Graph.effectiveSinkKey, type: nil, value: "x"), in: graph).isEmpty)
        let resync = MetadataResync()
        var moved = graph
        let change = Self.effective(Self.headphones)
        moved.apply(change)
        let turn = GraphTurn(graph: moved, session: GraphSession(logger: Logger(label: "test")), currentDefault: nil, currentSource: nil, now: 0)
        _ = resync.graphDidChange(change, in: turn)
        _ = resync.graphDidChange(change, in: turn)
        #expect(resync.takeSuspects().count == 1)
        #expect(resync.takeSuspects().isEmpty)
    }
}
