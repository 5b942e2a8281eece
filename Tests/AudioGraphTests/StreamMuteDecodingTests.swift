import AudioGraph
import Foundation
import Testing

/// A playback stream's `mute`, read from pw-dump's `info.params.Props` and written back.
@Suite("Stream mute in pw-dump")
struct StreamMuteDecodingTests {
    /// A stream node as pw-dump prints it, with `props`
    /// standing for the Props list's text.
    static func stream(id: Int, props: String, mediaClass: String = "Stream/Output/Audio") -> String {
        """
        {"id": \(id), "type": "PipeWire:Interface:Node", "info": {"state": "running", "n-input-ports": 0, "n-output-ports": 2,
          "props": {"node.name": "player-\(id)", "media.class": "\(mediaClass)"},
          "params": {"EnumFormat": [{"mediaType": "audio"}], "Props": \(props)}}}
        """
    }

    static let mutedProps = """
        [{"volume": 1.0, "mute": true, "channelVolumes": [1.0, 1.0], "channelMap": ["FL", "FR"], "softMute": false},
         {"params": ["monitor.channel-volumes", false, "channelmix.upmix", true]}]
        """

    @Test("a stream's mute comes from the first Props object that has one; other nodes' are not read")
    func readsStreamMute() throws {
        let json = "[" + [
            Self.stream(id: 40, props: Self.mutedProps),
            Self.stream(id: 41, props: #"[{"params": []}, {"mute": false}, {"mute": true}]"#),
            Self.stream(id: 42, props: #"[{"volume": 0.5}]"#),
            Self.stream(id: 43, props: "null"),
            Self.stream(id: 44, props: "[]"),
            Self.stream(id: 45, props: Self.mutedProps, mediaClass: "Audio/Sink"),
            Self.stream(id: 46, props: Self.mutedProps, mediaClass: "Stream/Input/Audio"),
        ].joined(separator: ",\n") + "]"
        let decoded = try PwDumpDecoder.decodeReporting(Data(json.utf8), source: "dump.json", strict: true)
        let graph = decoded.graph
        #expect(graph.nodes[40]?.mute == true)
        #expect(graph.nodes[41]?.mute == false)
        #expect(graph.nodes[42]?.mute == nil)
        #expect(graph.nodes[43]?.mute == nil)
        #expect(graph.nodes[44]?.mute == nil)
        // A live connection follows only playback streams' Props; a dump says no more.
        #expect(graph.nodes[45]?.mute == nil)
        #expect(graph.nodes[46]?.mute == nil)
        #expect(graph.nodes[40]?.state == .running && graph.nodes[40]?.outputPorts == 2)
        #expect(decoded.warnings.isEmpty)
    }

    @Test("a real pw-dump's stream has its mute (false), its sinks none")
    func realDump() throws {
        let url = try #require(Bundle.module.url(forResource: "sandbox-wireplumber", withExtension: "json", subdirectory: "Fixtures"))
        let graph = try PwDumpDecoder.decode(contentsOf: url)
        #expect(graph.playbackStreams.map(\.mute) == [false])
        #expect(graph.sinks.allSatisfy { $0.mute == nil })
    }

    @Test("a mute that is not a boolean, or Props that are not a list, is a warning with its path, never an error of the node",
        arguments: [
            (#"[{"volume": 1.0, "mute": "yes"}]"#, "objects[0].info.params.Props[0].mute", "field \"mute\" must be a boolean"),
            (#"[{"params": []}, {"mute": 1}, {"mute": true}]"#, "objects[0].info.params.Props[1].mute", "field \"mute\" must be a boolean"),
            (#"[{"mute": null}]"#, "objects[0].info.params.Props[0].mute", "field \"mute\" must be a boolean"),
            (#"{"mute": true}"#, "objects[0].info.params.Props", "field \"Props\" must be an array"),
        ])
    func malformedMute(props: String, location: String, message: String) throws {
        let json = "[" + Self.stream(id: 40, props: props) + "]"
        let decoded = try PwDumpDecoder.decodeReporting(Data(json.utf8), source: "dump.json")
        let node = try #require(decoded.graph.nodes[40])
        #expect(node.mute == nil)
        #expect(node.name == "player-40")
        #expect(decoded.warnings.map(\.location) == [location])
        #expect(decoded.warnings.first?.message.hasPrefix(message) == true, "\(decoded.warnings)")
        #expect(decoded.warnings.first?.message.hasSuffix("; field skipped") == true)
        #expect(throws: GraphDecodingError.self) { try PwDumpDecoder.decodeReporting(Data(json.utf8), source: "dump.json", strict: true) }
    }

    @Test("an eval script's object (decodeObject) reads the mute too")
    func singleObject() throws {
        let object = try JSONValue.parse(Self.stream(id: 40, props: Self.mutedProps))
        let change = try PwDumpDecoder.decodeObject(object, path: "line 3", source: "script")
        guard case .node(let node)? = change else { Issue.record("not a node: \(String(describing: change))"); return }
        #expect(node.mute == true)
    }

    @Test("mute true, false and unknown round-trip through the encoder, written as pw-dump's Props")
    func roundTrip() throws {
        var graph = Graph()
        for (id, mute) in [(40, true), (41, false), (42, nil)] as [(ObjectID, Bool?)] {
            graph.apply(.node(Node(id: id, state: .running, props: ["node.name": "s\(id)", "media.class": "Stream/Output/Audio"], mute: mute)))
        }
        graph.apply(.node(Node(id: 50, props: ["node.name": "speakers", "media.class": "Audio/Sink"], inputPorts: 2)))
        let encoded = PwDumpEncoder.encode(graph)
        let again = try PwDumpDecoder.decode(Data(encoded.canonicalText.utf8), source: "encoded")
        #expect(again == graph)
        #expect(again.nodes[40]?.mute == true && again.nodes[41]?.mute == false && again.nodes[42]?.mute == nil)
        let muted = PwDumpEncoder.object(try #require(graph.nodes[40]))
        #expect(muted["info"]?["params"]?["Props"] == .array([.object(["mute": .bool(true)])]))
        #expect(PwDumpEncoder.object(try #require(graph.nodes[42]))["info"]?["params"] == nil)
    }

    @Test("a node's mute counts in equality, hashing and Codable; a change of it alone is a change of the graph")
    func modelEquality() throws {
        let node = Node(id: 40, props: ["media.class": "Stream/Output/Audio"], mute: false)
        var graph = Graph()
        let added = graph.apply(.node(node))
        var muted = node
        muted.mute = true
        let changed = graph.apply(.node(muted))
        let repeated = graph.apply(.node(muted))
        #expect(added && changed)
        #expect(!repeated, "the same mute again changes nothing")
        #expect(node != muted && node.hashValue != muted.hashValue)
        let coded = try JSONDecoder().decode(Node.self, from: JSONEncoder().encode(muted))
        #expect(coded == muted)
        // A node written before the field existed decodes with the mute unknown.
        let old = try JSONDecoder().decode(Node.self, from: Data(#"{"id": 7, "props": {}}"#.utf8))
        #expect(old.mute == nil)
    }
}
