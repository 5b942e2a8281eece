import AudioGraph
import Foundation
import Testing

@Suite("pw-dump decoding")
struct PwDumpDecoderTests {
    static let fixture = Bundle.module.url(forResource: "sandbox-wireplumber", withExtension: "json", subdirectory: "Fixtures")!

    @Test("a real pw-dump (every object type) decodes, twice to the same model")
    func decodesRealDump() throws {
        let first = try PwDumpDecoder.decode(contentsOf: Self.fixture)
        let second = try PwDumpDecoder.decode(contentsOf: Self.fixture)
        #expect(first == second)
        #expect(first.sinks.compactMap(\.name) == ["bt_headphones", "speakers"])
        let headphones = try #require(first.node(named: "bt_headphones"))
        #expect(first.bluetoothAddress(of: headphones) == "AA:BB:CC:DD:EE:FF")
        #expect(first.formFactor(of: headphones) == "headphone")
        #expect(headphones.state == .running)
        #expect(first.configuredDefaultSinkName == nil)
        #expect(first.effectiveDefaultSinkName == "bt_headphones")
        let mpv = try #require(first.playbackStreams.first)
        #expect(first.linkedTargets(of: mpv.id).map(\.name) == ["bt_headphones"])
        #expect(first.ports(of: headphones.id, direction: .input).compactMap(\.channel) == ["FL", "FR"])
        // Numbers and booleans come back as the strings PipeWire uses.
        #expect(headphones.props["object.linger"] == "true")
        #expect(headphones.serial == 36)
    }

    @Test("missing optional fields and unknown types are tolerated")
    func toleratesMissingFields() throws {
        let json = """
        [
          {"id": 0, "type": "PipeWire:Interface:Core", "info": {"name": "pipewire-0"}},
          {"id": 5, "type": "PipeWire:Interface:Profiler"},
          {"id": 40, "type": "PipeWire:Interface:Node", "info": {"props": {"node.name": "s", "media.class": "Audio/Sink"}}},
          {"id": 41, "type": "PipeWire:Interface:Node", "info": null},
          {"id": 42, "type": "PipeWire:Interface:Device", "info": {}},
          {"id": 43, "type": "PipeWire:Interface:Metadata", "props": {"metadata.name": "default"}}
        ]
        """
        let graph = try PwDumpDecoder.decode(Data(json.utf8))
        #expect(graph.nodes.keys.sorted() == [40])
        #expect(graph.nodes[40]?.state == nil)
        #expect(graph.devices[42]?.props == [:])
        #expect(graph.defaultMetadata?.entries.isEmpty == true)
    }

    @Test("malformed files give an error with a location", arguments: [
        ("[{\"id\": 1,,}]", "line 1, column 11"),
        ("[\n  {\"id\": 1},\n  {\"id\": x}\n]", "line 3, column 10"),
        ("{\"id\": 1}", "top level"),
        ("[{\"type\": \"PipeWire:Interface:Node\"}]", "objects[0]"),
        ("[{\"id\": 1, \"type\": \"PipeWire:Interface:Port\", \"info\": {\"direction\": \"sideways\"}}]", "objects[0].info"),
        ("[{\"id\": 1, \"type\": \"PipeWire:Interface:Link\", \"info\": {\"output-node-id\": \"x\"}}]", "objects[0].info"),
        ("[{\"id\": 1, \"type\": \"PipeWire:Interface:Metadata\", \"metadata\": [{\"subject\": 0}]}]", "objects[0].metadata[0]"),
    ])
    func malformed(input: String, location: String) {
        do {
            _ = try PwDumpDecoder.decodeReporting(Data(input.utf8), source: "bad.json", strict: true)
            Issue.record("decoded \(input)")
        } catch {
            #expect(error.source == "bad.json")
            #expect(error.location.hasPrefix(location), "\(error)")
            #expect(error.description.hasPrefix("bad.json: "))
        }
    }

    /// Issue 19: a Link without port ids (seen in a real capture) cost the whole graph.
    @Test("objects and fields that cannot be read are skipped with a warning naming their path")
    func degradesWithWarnings() throws {
        let json = """
            [{"id": 40, "type": "PipeWire:Interface:Node", "info": {"state": "hibernating", "n-input-ports": 2,
              "props": {"node.name": "s", "media.class": "Audio/Sink"}}},
             {"id": 12, "type": "PipeWire:Interface:Link", "info": {"output-node-id": 40, "input-node-id": 41, "props": {}}},
             {"id": 50, "type": "PipeWire:Interface:Device", "info": {"props": {"device.name": "card"},
              "params": {"EnumRoute": [{"index": 0, "direction": "Output", "name": "a", "available": "no", "devices": [0]},
                                       {"index": 1, "direction": "Sideways", "name": "b"}],
                         "EnumFormat": [{"huge": [1, 2, 3]}]}}},
             {"id": 60, "type": "PipeWire:Interface:SecurityContext", "info": {}}]
            """
        let decoded = try PwDumpDecoder.decodeReporting(Data(json.utf8), source: "real.json")
        #expect(decoded.graph.nodes[40]?.state == nil && decoded.graph.nodes[40]?.inputPorts == 2)
        #expect(decoded.graph.links.isEmpty)
        #expect(decoded.graph.devices[50]?.routes?.all.map(\.name) == ["a"])
        #expect(decoded.skipped == 3)
        #expect(decoded.warnings.map(\.location) == ["objects[0].info", "objects[1].info", "objects[2].info.params.EnumRoute[1]"])
        #expect(decoded.warnings[1].description == #"real.json: objects[1].info: missing field "output-port-id"; object skipped"#)
        #expect(throws: GraphDecodingError.self) { try PwDumpDecoder.decodeReporting(Data(json.utf8), source: "real.json", strict: true) }
        // Routes survive a round trip through the encoder.
        let again = try PwDumpDecoder.decode(Data(PwDumpEncoder.encode(decoded.graph).canonicalText.utf8))
        #expect(again == decoded.graph)
    }

    @Test("graph changes apply and report whether anything changed")
    func applyChanges() {
        var graph = Graph()
        let node = Node(id: 7, state: .idle, props: ["node.name": "n", "media.class": "Audio/Sink"])
        do { let changed = graph.apply(.node(node)); #expect(changed) }
        do { let changed = graph.apply(.node(node)); #expect(!changed) }
        do { let changed = graph.apply(.metadata(Metadata(id: 9, props: ["metadata.name": "default"]))); #expect(changed) }
        do { let changed = graph.apply(.metadataProperty(metadata: 9, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"n"}"#)); #expect(changed) }
        #expect(graph.configuredDefaultSinkName == "n")
        do { let changed = graph.apply(.metadataProperty(metadata: 9, subject: 0, key: nil, type: nil, value: nil)); #expect(changed) }
        #expect(graph.configuredDefaultSinkName == nil)
        do { let changed = graph.apply(.removed(7)); #expect(changed) }
        do { let changed = graph.apply(.removed(7)); #expect(!changed) }
    }

    @Test("ports pair by channel; mono fans out; unnamed equal counts pair in order")
    func portPairing() {
        func port(_ id: ObjectID, _ node: ObjectID, _ direction: PortDirection, _ channel: String?, monitor: Bool = false) -> GraphChange {
            var props: Properties = ["node.id": String(node)]
            props["audio.channel"] = channel
            if monitor { props["port.monitor"] = "true" }
            return .port(Port(id: id, direction: direction, props: props))
        }
        var graph = Graph()
        for change in [
            port(1, 10, .output, "FL"), port(2, 10, .output, "FR"),
            port(3, 20, .input, "FR"), port(4, 20, .input, "FL"), port(5, 20, .output, "FL", monitor: true),
            port(6, 30, .output, "MONO"), port(7, 40, .input, nil), port(8, 40, .input, nil),
        ] { graph.apply(change) }
        #expect(graph.portPairs(from: 10, to: 20).map { [$0.output.id, $0.input.id] } == [[1, 4], [2, 3]])
        #expect(graph.portPairs(from: 30, to: 20).map { [$0.output.id, $0.input.id] } == [[6, 3], [6, 4]])
        #expect(graph.portPairs(from: 10, to: 40).map { [$0.output.id, $0.input.id] } == [[1, 7], [2, 8]])
        #expect(graph.portPairs(from: 20, to: 40).map(\.output.id) == [5, 5])
        #expect(graph.portPairs(from: 10, to: 30).isEmpty)
    }

    @Test("the routing view names sinks, streams and defaults as stable JSON fields")
    func routingView() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: Self.fixture)
        let view = RoutingView(graph)
        #expect(view.sinks.map(\.name) == ["bt_headphones", "speakers"])
        #expect(view.sinks[0].isEffectiveDefault)
        #expect(view.streams.map(\.linkedTo) == [["bt_headphones"]])
        #expect(view.renderText().contains("* 35"))
    }
}
