import WireFields
import AudioGraph
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The input (docs/policy.md §8) through the daemon's one input path over a fake PipeWire: what
/// is written for the default source, which echoes are Earshot's own, how capture streams are
/// linked standalone.
@Suite("Daemon pipeline: the microphone", .blockingCalls)
struct DaemonInputSideTests {
    typealias H = DaemonHarness
    static let laptopMicrophone = "alsa_input.pci.analog-stereo"
    static let headsetMicrophone = "bluez_input.AA_BB_CC_DD_EE_FF.0"
    static let recorderID: ObjectID = 80

    /// The harness's graph plus the laptop's microphone (the configured default source), the
    /// headset's, and a recorder with one input port.
    static func graph(sessionManager: Bool, configuredSource: Bool = true) -> Graph {
        var graph = H.graph(sessionManager: sessionManager)
        let sources: [(ObjectID, String, Properties)] = [
            (50, laptopMicrophone, ["device.bus": "pci", "device.form-factor": "internal"]),
            (53, headsetMicrophone, ["device.bus": "bluetooth", "device.form-factor": "headset", "api.bluez5.address": H.address]),
        ]
        for (id, name, props) in sources {
            graph.apply(.node(Node(id: id, props: props.merging(["node.name": name, "media.class": "Audio/Source", "object.serial": String(id + 500)]) { a, _ in a })))
            graph.apply(.port(Port(id: id + 1, direction: .output, props: ["node.id": String(id), "audio.channel": "MONO", "object.serial": String(id + 501)])))
        }
        graph.apply(.node(Node(id: recorderID, props: ["media.class": "Stream/Input/Audio", "node.name": "recorder", "client.id": "21", "object.serial": "580"])))
        graph.apply(.port(Port(id: 81, direction: .input, props: ["node.id": String(recorderID), "audio.channel": "MONO", "object.serial": "581"])))
        if configuredSource { graph.apply(sourceWritten(laptopMicrophone)) }
        return graph
    }

    static func sourceWritten(_ name: String) -> GraphChange {
        .metadataProperty(metadata: H.metadataID, subject: 0, key: Graph.configuredSourceKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: name))
    }

    @Test("cooperative: on-head writes the sink and the source once each; their echoes are Earshot's; a microphone picked by hand is followed, not written back")
    func cooperative() async throws {
        let h = try await H()
        await h.connect(Self.graph(sessionManager: true))
        #expect(h.log.all.isEmpty, "nothing to write at start")
        _ = await h.place("on-head", register: true)
        #expect(h.log.all == ["set default.configured.audio.sink=\(H.headphones)", "set default.configured.audio.source=\(Self.headsetMicrophone)"])
        await h.echo()
        #expect(await h.decision?.trigger != .userSelectedSource(Self.headsetMicrophone))
        #expect(await h.daemon.status().decisionRecord?.defaultSource == Self.headsetMicrophone)

        await h.changes(Self.sourceWritten(Self.laptopMicrophone))  // wpctl set-default <laptop microphone>
        let decision = await h.decision
        #expect(decision?.input?.reason == .userOverride && decision?.defaultSource == Self.laptopMicrophone)
        #expect(decision?.defaultSink == H.headphones)
        #expect(h.log.all.count == 2, "the user's pick is not written back: \(h.log.all)")
        await h.stop()
    }

    @Test("standalone: the recorder is linked from the default source, then moved make before break with the headset")
    func standalone() async throws {
        let h = try await H()
        await h.connect(Self.graph(sessionManager: false))
        #expect(h.log.all.contains("link 50→\(Self.recorderID)"), "\(h.log.all)")
        #expect(h.log.all.contains("set default.audio.source=\(Self.laptopMicrophone)"))
        let before = h.log.all.count
        _ = await h.place("on-head", register: true)
        let after = Array(h.log.all.dropFirst(before))
        // The new link names the old one to break once it exists (make before break).
        #expect(after.contains { $0.hasPrefix("link 53→\(Self.recorderID) unlink ") }, "\(after)")
        #expect(after.contains("set default.configured.audio.source=\(Self.headsetMicrophone)"))
        await h.stop()
    }

    @Test("[input] follow = \"never\": nothing is written for the source, no capture stream is linked")
    func never() async throws {
        let h = try await H(config: "[input]\nfollow = \"never\"\n")
        await h.connect(Self.graph(sessionManager: false, configuredSource: false))
        _ = await h.place("on-head", register: true)
        #expect(!h.log.all.contains { $0.contains("audio.source") || $0.contains("→\(Self.recorderID)") }, "\(h.log.all)")
        #expect(await h.decision?.input == nil)
        await h.stop()
    }
}
