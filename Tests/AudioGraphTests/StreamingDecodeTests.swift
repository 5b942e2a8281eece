import AudioGraph
import Foundation
import Testing

/// Issue 12 item 16: the pw-dump decoder reads the file in one pass (JSONScanner), object by
/// object, skipping `info.params`; it must build exactly the graph the tree decoder built.
@Suite("pw-dump streaming decode")
struct StreamingDecodeTests {
    /// The previous decoder: the whole file as a JSONValue tree (JSONDecoder), then each object.
    static func treeDecode(_ data: Data) throws -> Graph {
        guard case .array(let objects) = try JSONDecoder().decode(JSONValue.self, from: data) else { throw CocoaError(.coderReadCorrupt) }
        var graph = Graph()
        for (index, object) in objects.enumerated() {
            if let change = try PwDumpDecoder.decodeObject(object, path: "objects[\(index)]", source: "tree") { graph.apply(change) }
        }
        return graph
    }

    @Test("the fixture decodes to the same graph as the tree decoder")
    func sameGraphAsTheTreeDecoder() throws {
        let data = try Data(contentsOf: PwDumpDecoderTests.fixture)
        let streamed = try PwDumpDecoder.decode(data)
        #expect(streamed == (try Self.treeDecode(data)))
        #expect(!streamed.nodes.isEmpty && !streamed.ports.isEmpty && !streamed.links.isEmpty && !streamed.metadata.isEmpty)
    }

    @Test("escapes, unicode, numbers and skipped params read as JSONDecoder reads them")
    func valuesReadExactly() throws {
        let text = #"""
            [ {"id": 7, "type": "PipeWire:Interface:Node", "info": {"state": "idle",
               "params": {"EnumFormat": [{"a": [1, {"b": "]}\"["}], "c": -1.5e3}], "x": null},
               "props": {"node.name": "s\u00e9\"q\\/\n\ud83c\udfa7", "node.description": "Caf\u00e9 ✓",
                         "media.class": "Audio/Sink", "i": -42, "f": 0.25, "e": 1e2, "t": true, "n": null,
                         "big": 9223372036854775807, "o": {"k": [1, 2]}}}} ]
            """#
        let data = Data(text.utf8)
        let graph = try PwDumpDecoder.decode(data)
        #expect(graph == (try Self.treeDecode(data)))
        let node = try #require(graph.nodes[7])
        #expect(node.name == "sé\"q\\/\n🎧")
        #expect(node.props["node.description"] == "Café ✓")
        #expect(node.props["i"] == "-42" && node.props["f"] == "0.25" && node.props["e"] == "100" && node.props["t"] == "true")
        #expect(node.props["n"] == nil && node.props["big"] == "9223372036854775807")
        #expect(node.state == .idle)
    }

    @Test("broken text anywhere is a syntax error with its line, before any field error", arguments: [
        ("[\n{\"id\": 1, \"type\": \"PipeWire:Interface:Node\", \"info\": {\"params\": {\"a\": [1, }}}\n]", "line 2"),
        ("[\n{\"id\": \"x\", \"type\": \"PipeWire:Interface:Node\"},\n{\"id\" 2}\n]", "line 3"),
        ("[{\"id\": 1}] trailing", "line 1, column 13"),
        ("[\"unterminated", "line 1"),
        ("[" + String(repeating: "[", count: 100_000), "line 1"),
    ])
    func syntaxErrorsHaveALine(_ text: String, _ location: String) {
        #expect {
            _ = try PwDumpDecoder.decode(Data(text.utf8), source: "g.json")
        } throws: { error in
            guard let error = error as? GraphDecodingError else { return false }
            return error.location.hasPrefix(location) && error.message == "not valid JSON"
        }
    }
}
