import AudioGraph
import Foundation
import Testing

/// `Graph` indexes nodes by name and kind as changes are applied: lookups neither scan nor sort,
/// and the indexes never show in equality or coding.
struct GraphIndexTests {
    static func sink(_ id: ObjectID, _ name: String) -> Node {
        Node(id: id, props: ["node.name": name, "media.class": "Audio/Sink"])
    }

    static func stream(_ id: ObjectID, _ name: String) -> Node {
        Node(id: id, props: ["node.name": name, "media.class": "Stream/Output/Audio"])
    }

    @Test func addRemoveAndRename() {
        var graph = Graph()
        graph.apply(.node(Self.sink(9, "b")))
        graph.apply(.node(Self.sink(3, "a")))
        graph.apply(.node(Self.stream(5, "player")))
        #expect(graph.sinks.map(\.id) == [3, 9])
        #expect(graph.playbackStreams.map(\.id) == [5])
        #expect(graph.node(named: "a")?.id == 3)
        #expect(graph.node(named: "player")?.id == 5)

        // Renamed: the old name finds nothing, the new one finds it.
        graph.apply(.node(Self.sink(3, "c")))
        #expect(graph.node(named: "a") == nil)
        #expect(graph.node(named: "c")?.id == 3)
        #expect(graph.sinks.map(\.id) == [3, 9])

        // No longer a sink (its media class changed): out of `sinks`, still found by name.
        var notASink = Self.sink(9, "b")
        notASink.props["media.class"] = "Audio/Source"
        graph.apply(.node(notASink))
        #expect(graph.sinks.map(\.id) == [3])
        #expect(graph.node(named: "b")?.id == 9)

        graph.apply(.removed(3))
        graph.apply(.removed(5))
        #expect(graph.sinks.isEmpty && graph.playbackStreams.isEmpty)
        #expect(graph.node(named: "c") == nil && graph.node(named: "player") == nil)
        // Removing what is not there changes nothing.
        let changed = graph.apply(.removed(3))
        #expect(!changed)
    }

    @Test func sharedNamesResolveToTheSmallestID() {
        var graph = Graph()
        graph.apply(.node(Self.sink(12, "dup")))
        graph.apply(.node(Self.sink(4, "dup")))
        #expect(graph.node(named: "dup")?.id == 4)
        #expect(graph.nodes(named: "dup").map(\.id) == [4, 12])
        graph.apply(.removed(4))
        #expect(graph.node(named: "dup")?.id == 12)
    }

    @Test func equalityAndCodingSeeOnlyTheObjects() throws {
        var applied = Graph()
        for node in [Self.sink(2, "x"), Self.sink(1, "y"), Self.stream(3, "z")] { applied.apply(.node(node)) }
        var assigned = Graph()
        assigned.nodes = [1: Self.sink(1, "y"), 3: Self.stream(3, "z"), 2: Self.sink(2, "x")]
        #expect(applied == assigned)
        #expect(applied.hashValue == assigned.hashValue)
        #expect(assigned.node(named: "x")?.id == 2 && assigned.sinks.map(\.id) == [1, 2])

        // Written through the table: the indexes follow.
        assigned.nodes[1] = nil
        #expect(assigned.sinks.map(\.id) == [2] && assigned.node(named: "y") == nil)

        let decoded = try JSONDecoder().decode(Graph.self, from: JSONEncoder().encode(applied))
        #expect(decoded == applied)
        #expect(decoded.node(named: "z")?.id == 3 && decoded.sinks.map(\.id) == [1, 2])
        let keys = try JSONSerialization.jsonObject(with: JSONEncoder().encode(applied)) as? [String: Any]
        #expect(Set(keys?.keys.map { $0 } ?? []) == ["nodes", "ports", "links", "devices", "clients", "metadata"])
    }

    @Test func aChurnOfChangesKeepsTheIndexesEqualToAScan() {
        var graph = Graph()
        // A fixed, scrambled walk over ids, names and kinds (multiplications by primes).
        for step in 0..<3000 {
            let id = ObjectID(step * 7919 % 200)
            if step * 104_729 % 3 == 0 {
                graph.apply(.removed(id))
            } else {
                let name = "n\(step * 6151 % 50)"
                graph.apply(.node(step * 3571 % 5 < 3 ? Self.sink(id, name) : Self.stream(id, name)))
            }
        }
        #expect(!graph.sinks.isEmpty && !graph.playbackStreams.isEmpty)
        #expect(graph.sinks.map(\.id) == graph.nodes.values.filter(\.isAudioSink).map(\.id).sorted())
        #expect(graph.playbackStreams.map(\.id) == graph.nodes.values.filter(\.isPlaybackStream).map(\.id).sorted())
        for name in Set(graph.nodes.values.compactMap(\.name)) {
            #expect(graph.node(named: name)?.id == graph.nodes.values.filter { $0.name == name }.map(\.id).min())
        }
    }
}
