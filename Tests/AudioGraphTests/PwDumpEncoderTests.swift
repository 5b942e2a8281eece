import AudioGraph
import Foundation
import Testing

/// A graph written as pw-dump reads back as the same graph (what `earshot record` relies on:
/// its `graph.json` is replayed by `earshot eval`).
struct PwDumpEncoderTests {
    @Test("a real pw-dump (WirePlumber sandbox) round-trips: decode(encode(graph)) == graph")
    func roundTrip() throws {
        let url = try #require(Bundle.module.url(forResource: "sandbox-wireplumber", withExtension: "json", subdirectory: "Fixtures"))
        let graph = try PwDumpDecoder.decode(contentsOf: url)
        #expect(!graph.nodes.isEmpty && !graph.metadata.isEmpty)
        let text = PwDumpEncoder.encode(graph).canonicalText
        let again = try PwDumpDecoder.decode(Data(text.utf8), source: "encoded")
        #expect(again == graph)
        #expect(PwDumpEncoder.encode(again).canonicalText == text, "deterministic")
    }

    @Test("every object kind, states, metadata entries with and without a type, and odd text survive")
    func everyKind() throws {
        var graph = Graph()
        graph.apply(.node(Node(id: 40, state: .running, props: ["node.name": "a \"quoted\" & <odd> name", "media.class": "Audio/Sink"])))
        graph.apply(.device(Device(id: 30, props: ["device.bus": "bluetooth"])))
        graph.apply(.port(Port(id: 41, direction: .input, props: ["node.id": "40", "audio.channel": "FL"])))
        graph.apply(.client(Client(id: 20, props: ["application.name": "wireplumber"])))
        graph.apply(.link(Link(id: 70, outputNode: 60, outputPort: 61, inputNode: 40, inputPort: 41, state: .active, props: [:])))
        var metadata = Metadata(id: 50, props: ["metadata.name": "default"])
        metadata.set(subject: 0, key: "default.configured.audio.sink", type: "Spa:String:JSON", value: #"{"name":"a"}"#)
        metadata.set(subject: 60, key: "target.object", type: nil, value: "a")
        graph.apply(.metadata(metadata))
        let again = try PwDumpDecoder.decode(Data(PwDumpEncoder.encode(graph).canonicalText.utf8))
        #expect(again == graph)
    }
}
