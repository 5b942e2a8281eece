import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// Issue 38 in `earshot eval`: a decision that moves away from a worn headset's sink says which
/// streams would be paused (a declared player's: pid, ancestor, Flatpak), held (muted), kept
/// (a call's) or left; in JSON and text; `--against` reports a difference.
struct EvalPlaybackTests {
    static let speakers = "alsa_output.pci-0000_00_1f.3.analog-stereo"
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"

    static func node(_ id: ObjectID, _ props: Properties, state: NodeState? = nil, mute: Bool? = nil) -> Node {
        var node = Node(id: id, state: state, props: props.merging(["object.serial": String(id + 1000)]) { a, _ in a })
        node.mute = mute
        return node
    }

    /// Speakers and Bluetooth headphones; on the headphones: Chromium (through pipewire-pulse:
    /// its stream's process is the audio service, a child of the browser), paplay (no player),
    /// a softphone's ring (media.role phone), an idle stream and a Flatpak Spotify.
    static var graph: Graph {
        var graph = Graph()
        graph.apply(.node(node(40, ["node.name": speakers, "media.class": "Audio/Sink", "device.bus": "pci", "device.form-factor": "internal"])))
        graph.apply(.node(node(43, [
            "node.name": headphones, "media.class": "Audio/Sink", "device.bus": "bluetooth", "device.form-factor": "headphone",
            "api.bluez5.address": "AA:BB:CC:DD:EE:FF",
        ])))
        graph.apply(.metadata(Metadata(id: 30, props: ["metadata.name": "default"])))
        let clients: [(ObjectID, Properties)] = [
            (70, ["application.process.id": "17566", "pipewire.sec.pid": "900", "client.api": "pipewire-pulse", "application.name": "Chromium"]),
            (71, ["application.process.id": "5151", "pipewire.sec.pid": "5151", "application.name": "paplay"]),
            (72, ["application.process.id": "6000", "pipewire.sec.pid": "6000", "application.name": "Linphone"]),
            (73, ["application.process.id": "6100", "pipewire.sec.pid": "6100", "application.name": "mpv"]),
            (74, ["application.process.id": "2", "pipewire.sec.pid": "7731", "pipewire.access.portal.app_id": "com.spotify.Client", "application.name": "spotify"]),
        ]
        for (id, props) in clients { graph.apply(.client(Client(id: id, props: props))) }
        let streams: [(ObjectID, ObjectID, Properties, NodeState)] = [
            (80, 70, ["application.name": "Chromium"], .running),
            (81, 71, ["application.name": "paplay"], .running),
            (82, 72, ["application.name": "Linphone", "media.role": "phone"], .running),
            (83, 73, ["application.name": "mpv"], .idle),
            (84, 74, ["application.name": "spotify"], .running),
        ]
        for (id, client, props, state) in streams {
            graph.apply(.node(node(id, props.merging(["media.class": "Stream/Output/Audio", "client.id": String(client)]) { a, _ in a }, state: state, mute: false)))
            graph.apply(.link(Link(id: id + 100, outputNode: id, outputPort: id + 200, inputNode: 43, inputPort: 44)))
        }
        return graph
    }

    static let script = """
        {"at": 0, "register": {"accessory": "AA:BB:CC:DD:EE:FF", "reporter": "org.example.test", "capabilities": ["audio-switching", "placement"], "placement": "on-head"}}
        {"at": 10, "add-player": {"name": "org.mpris.MediaPlayer2.chromium.instance17380", "pid": 17380, "descendants": [17400, 17566]}}
        {"at": 10, "add-player": {"name": "org.mpris.MediaPlayer2.spotify", "pid": 8800, "flatpak": {"app": "com.spotify.Client"}}}
        {"at": 1000, "update": {"accessory": "AA:BB:CC:DD:EE:FF", "placement": "off-head"}}
        """

    static func run(_ config: PolicyConfig = PolicyConfig()) throws -> [Decision] {
        var decisions: [Decision] = []
        try EvalRunner.run(graph: graph, config: config, hostAddresses: [], events: try EvalScript.parse(script, source: "playback.jsonl")) { decision, _ in
            decisions.append(decision)
        }
        return decisions
    }

    @Test("off the head: Chromium paused (ancestor), Spotify paused (Flatpak), paplay held, the softphone kept, the idle stream left")
    func preview() throws {
        let decisions = try Self.run()
        #expect(decisions.filter { $0.playback != nil }.count == 1)
        let playback = try #require(decisions.last { $0.playback != nil }?.playback)
        #expect(playback.reason == OpenEnum(.accessoryRemoved))
        #expect(playback.sink == Self.headphones)
        #expect(playback.summary == "pause #80 (ancestor) · hold #81 · keep #82 · leave #83 · pause #84 (flatpak)")
        #expect(playback.streams.first?.player == "org.mpris.MediaPlayer2.chromium.instance17380")
        // JSON: the decision's `playback`, as declared; null on the others.
        let json = try JSONValue.parse(DecisionRecord(try #require(decisions.last { $0.playback != nil })).jsonLine)
        #expect(json["playback"]?["streams"]?.canonicalText.contains(#""action":"hold""#) == true)
        #expect(try JSONValue.parse(DecisionRecord(decisions[0]).jsonLine)["playback"] == .null)
        // Text.
        let text = DecisionText.render(try #require(decisions.last { $0.playback != nil }), detail: .summary)
        #expect(text.contains("playback (accessory-removed) on \(Self.headphones): 5 stream(s)"))
        #expect(text.contains("pause #80 Chromium: org.mpris.MediaPlayer2.chromium.instance17380 (ancestor)"))
        #expect(text.contains("hold #81 paplay: no player would pause it"))
    }

    @Test("hold-unpausable = leave: nothing held; --against says so as a playback difference")
    func leaveAndAgainst() throws {
        let leave = try PolicyConfigLoader.parse("[playback]\nhold-unpausable = \"leave\"\n", file: "leave.toml")
        let decisions = try Self.run(leave)
        #expect(try #require(decisions.last { $0.playback != nil }?.playback).summary == "pause #80 (ancestor) · leave #81 · keep #82 · leave #83 · pause #84 (flatpak)")
        let events = try EvalScript.parse(Self.script, source: "playback.jsonl")
        let outcome = try EvalDiff.run(graph: Self.graph, old: PolicyConfig(), new: leave, hostAddresses: [], events: events)
        let playback = outcome.differences.filter { $0.direction == .playback }
        #expect(playback.count == 1)
        #expect(playback.first?.old.default?.contains("hold #81") == true)
        #expect(EvalDiffText.render(playback).joined(separator: "\n").contains("playback · "))
    }

    @Test("add-player lines: refused with where and why")
    func badPlayers() {
        for (line, message) in [
            (#"{"at": 0, "add-player": {"pid": 5}}"#, "\"name\" must be an MPRIS bus name"),
            (#"{"at": 0, "add-player": {"name": "org.mpris.MediaPlayer2.x", "pid": 1}}"#, "\"pid\" must be a process id"),
            (#"{"at": 0, "add-player": {"name": "org.mpris.MediaPlayer2.x", "pid": 5, "descendants": ["a"]}}"#, "\"descendants\"[0] must be a process id"),
            (#"{"at": 0, "add-player": {"name": "org.mpris.MediaPlayer2.x", "pid": 5, "flatpak": {"instance": "1"}}}"#, "\"flatpak\" takes"),
            (#"{"at": 0, "add-player": {"name": "org.mpris.MediaPlayer2.x", "pid": 5, "colour": 1}}"#, "unknown field \"colour\""),
            (#"{"at": 0, "add-player": {"name": "org.mpris.MediaPlayer2.x", "pid": 5}, "expect": {"default": "x"}}"#, "nothing to expect"),
        ] {
            do {
                _ = try EvalScript.parse(line, source: "p.jsonl")
                Issue.record("accepted: \(line)")
            } catch {
                #expect(error.line == 1)
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
    }
}
