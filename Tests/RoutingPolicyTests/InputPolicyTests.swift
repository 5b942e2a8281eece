import WireFields
import AudioGraph
import Foundation
import RoutingPolicy
import Testing

/// Issue 20: the microphone follows the worn headset (docs/policy.md §8), by the same rules as
/// the output, over small graphs and over graphs captured on real machines.
@Suite("the input: the default source follows the worn headset")
struct InputPolicyTests {
    static let laptopMicrophone = "alsa_input.pci-0000_00_1f.3.analog-stereo"
    static let headphonesMicrophone = "bluez_input.AA_BB_CC_DD_EE_FF.0"
    static let headsetMicrophone = "bluez_input.50_C2_ED_12_34_56.0"

    static func source(_ id: ObjectID, _ name: String, _ props: Properties, mediaClass: String = "Audio/Source") -> Node {
        var all = props
        all["node.name"] = name
        all["media.class"] = mediaClass
        all["object.serial"] = String(id + 1000)
        return Node(id: id, state: .suspended, props: all)
    }

    static let laptopMicrophoneNode = source(60, laptopMicrophone, ["device.bus": "pci", "device.form-factor": "internal"])
    static let headphonesMicrophoneNode = source(
        61, headphonesMicrophone, ["device.bus": "bluetooth", "device.form-factor": "headphone", "api.bluez5.address": Sinks.headphonesAddress])
    static let headsetMicrophoneNode = source(
        62, headsetMicrophone, ["device.bus": "bluetooth", "device.form-factor": "headset", "api.bluez5.address": Sinks.headsetAddress])

    /// The desktop of the output tests plus the laptop's microphone and the headphones' (with
    /// `configuredSource` as the user's configured default source).
    static func graph(_ extra: [Node] = [headphonesMicrophoneNode], configuredSource: String? = laptopMicrophone) -> Graph {
        var graph = Sinks.graph(Sinks.all + [laptopMicrophoneNode] + extra)
        if let configuredSource {
            graph.apply(.metadataProperty(
                metadata: 30, subject: 0, key: Graph.configuredSourceKey, type: "Spa:String:JSON", value: #"{"name":"\#(configuredSource)"}"#))
        }
        return graph
    }

    static func engine(_ graph: Graph = graph(), config: PolicyConfig = PolicyConfig()) -> (PolicyEngine, Decision) {
        var engine = PolicyEngine(graph: graph, config: config)
        engine.holdCurrentDefault()
        let decision = engine.handle(.start, at: 0).decision
        return (engine, decision)
    }

    static func settle(_ engine: inout PolicyEngine, after decision: Decision) -> Decision {
        var last = decision
        while let due = engine.nextDeadline { last = engine.handle(.timerFired, at: due).decision }
        return last
    }

    @Test("a worn headset with a microphone takes the output and the input in one decision; off, both come back")
    func bothMoveTogether() throws {
        var (engine, initial) = Self.engine()
        #expect(initial.defaultSink == Sinks.speakers && initial.defaultSource == Self.laptopMicrophone)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        let on = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 1000).decision
        #expect(on.defaultSink == Sinks.headphones && on.changed)
        let input = try #require(on.input)
        #expect(input.defaultSource == Self.headphonesMicrophone && input.changed)
        #expect(input.previous == Self.laptopMicrophone && input.reason == .placementChanged)
        #expect(on.decidedBy(in: input.ranking)?.tier == .worn)

        _ = engine.handle(Requests.place(Sinks.headphonesAddress, .offHead), at: 5000)
        let off = Self.settle(&engine, after: on)
        #expect(off.defaultSink == Sinks.speakers && off.defaultSource == Self.laptopMicrophone)
        // Handed back to what it took them from (§4), on each side.
        #expect(off.input?.ranking.first?.rank.restore == true)
        #expect(off.input?.rejected.contains { $0.node == Self.headphonesMicrophone && $0.rejection == .offHead(.address(Requests.address(Sinks.headphonesAddress))) } == true)
    }

    @Test("two headsets worn at once: the microphone pairs with the one the output goes to, whatever the name or class of the microphones")
    func pairedWithTheOutput() throws {
        // Both microphones say headset (as Bluetooth HFP nodes do); by name alone the other
        // headset's would win.
        var headphonesMicrophone = Self.headphonesMicrophoneNode
        headphonesMicrophone.props["device.form-factor"] = "headset"
        var (engine, _) = Self.engine(Self.graph([headphonesMicrophone, Self.headsetMicrophoneNode]))
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        _ = engine.handle(Requests.register(Sinks.headsetAddress, placement: .offHead), at: 10)
        _ = engine.handle(Requests.place(Sinks.headsetAddress, .onHead), at: 1000)
        let both = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 1000).decision
        // Put on at the same time: the headphones win the output by class.
        #expect(both.defaultSink == Sinks.headphones && both.decidedBy?.tier == .classOrder)
        let input = try #require(both.input)
        #expect(input.defaultSource == Self.headphonesMicrophone)
        #expect(input.ranking.first?.rank.worn?.paired == true)
        #expect(both.decidedBy(in: input.ranking)?.tier == .worn)
        #expect(both.explanation(of: try #require(input.ranking.first)).terms.first?.value == "put on 1000 ms, paired with the output")
        // The headphones come off: the output and the microphone go to the headset together.
        _ = engine.handle(Requests.place(Sinks.headphonesAddress, .offHead), at: 2000)
        let off = Self.settle(&engine, after: both)
        #expect(off.defaultSink == Sinks.headset && off.defaultSource == Self.headsetMicrophone)
    }

    @Test("a headset whose profile offers no microphone (A2DP): only the output moves")
    func noSourceInProfile() {
        var (engine, _) = Self.engine(Self.graph([]))
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        let on = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 1000).decision
        #expect(on.defaultSink == Sinks.headphones)
        #expect(on.defaultSource == Self.laptopMicrophone && on.input?.changed == false)
    }

    @Test("a microphone picked by hand holds until the next placement transition")
    func pickHolds() {
        var (engine, _) = Self.engine()
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead), at: 10)
        let picked = engine.handle(.userSelectedSource(Self.laptopMicrophone), at: 100).decision
        #expect(picked.defaultSource == Self.laptopMicrophone && picked.input?.reason == .userOverride)
        #expect(picked.defaultSink == Sinks.headphones && !picked.changed, "a microphone pick leaves the output alone")
        #expect(engine.sourceOverride == Self.laptopMicrophone && engine.lastSourceChoice == Self.laptopMicrophone)
        // A sink picked by hand leaves the microphone alone too.
        let sink = engine.handle(.userSelectedDefault(Sinks.dac), at: 200).decision
        #expect(sink.defaultSource == Self.laptopMicrophone && sink.input?.changed == false && sink.input?.reason == nil)
        // The next transition ends both picks: the worn headset takes both again.
        _ = engine.handle(Requests.place(Sinks.headphonesAddress, .offHead), at: 300)
        _ = Self.settle(&engine, after: sink)
        let on = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 2000).decision
        #expect(on.defaultSink == Sinks.headphones && on.defaultSource == Self.headphonesMicrophone)
    }

    @Test("follow = \"never\": no input decision, nothing to write; the output is unchanged")
    func followNever() {
        var config = PolicyConfig()
        config.input.follow = .never
        var (engine, initial) = Self.engine(config: config)
        #expect(initial.input == nil && initial.defaultSource == nil)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        let on = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 1000).decision
        #expect(on.defaultSink == Sinks.headphones && on.input == nil)
        #expect(!engine.followsInput)
    }

    @Test("candidates: sources only; a sink's monitor, a video source and a capture stream never are; a virtual source only by pick or rule")
    func candidates() throws {
        let monitor = Self.source(70, Sinks.speakers + ".monitor", ["device.bus": "pci"])
        let flagged = Self.source(71, "flagged", ["device.bus": "pci", "stream.monitor": "true"])
        let camera = Self.source(72, "v4l2_input.camera", ["device.bus": "usb"], mediaClass: "Video/Source")
        let capture = Self.source(73, "pw-record", [:], mediaClass: "Stream/Input/Audio")
        let noiseSuppressed = Self.source(74, "rnnoise_source", [:], mediaClass: "Audio/Source/Virtual")
        var (engine, decision) = Self.engine(Self.graph([monitor, flagged, camera, capture, noiseSuppressed]))
        let input = try #require(decision.input)
        let named = Set(input.ranking.map(\.node) + input.rejected.map(\.node))
        #expect(named == [Self.laptopMicrophone, "rnnoise_source"])
        #expect(input.rejected.first { $0.node == "rnnoise_source" }?.rejection == .virtual)
        #expect(input.summary == "1/2 sources eligible: 1 virtual")
        #expect(engine.graph.captureStreams.map(\.name) == ["pw-record"])
        decision = engine.handle(.userSelectedSource("rnnoise_source"), at: 10).decision
        #expect(decision.defaultSource == "rnnoise_source")
    }

    @Test("a USB headset known by its sink's name: its microphone (same device, another name) follows it")
    func accessoryByDevice() throws {
        let device = Device(id: 90, props: ["device.name": "alsa_card.usb-Logitech_PRO_X-00", "device.bus": "usb", "device.form-factor": "headset"])
        var sink = Sinks.usbHeadsetNode
        sink.props["device.id"] = "90"
        let microphone = Self.source(63, "alsa_input.usb-Logitech_PRO_X-00.mono-fallback", ["device.id": "90"])
        var graph = Sinks.graph([Sinks.speakersNode, sink, Self.laptopMicrophoneNode, microphone])
        graph.apply(.device(device))
        var (engine, _) = Self.engine(graph)
        _ = engine.handle(Requests.register(Sinks.usbHeadset, placement: .offHead), at: 10)
        var decision = engine.handle(Requests.place(Sinks.usbHeadset, .onHead), at: 1000).decision
        #expect(decision.defaultSink == Sinks.usbHeadset)
        #expect(decision.defaultSource == microphone.name)
        #expect(decision.input?.ranking.first?.rank.accessory == .nodeName(Sinks.usbHeadset))
        _ = engine.handle(Requests.place(Sinks.usbHeadset, .offHead), at: 2000)
        decision = Self.settle(&engine, after: decision)
        #expect(decision.defaultSource == Self.laptopMicrophone)
        #expect(decision.input?.rejected.first { $0.node == microphone.name }?.rejection == .offHead(.nodeName(Sinks.usbHeadset)))
    }

    @Test("WirePlumber 0.5's bluez_input node carries the headset's device.id, not the address: matched through the device")
    func bluezInputThroughItsDevice() throws {
        let device = Device(id: 91, props: ["device.name": "bluez_card.AA_BB_CC_DD_EE_FF", "api.bluez5.address": Sinks.headphonesAddress, "device.bus": "bluetooth"])
        let microphone = Self.source(64, "bluez_input.AA:BB:CC:DD:EE:FF", ["device.id": "91", "device.form-factor": "headset"])
        var graph = Self.graph([microphone])
        graph.apply(.device(device))
        var (engine, _) = Self.engine(graph)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead), at: 10)
        let decision = try #require(engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 20).decision.input)
        #expect(decision.defaultSource == microphone.name)
    }

    @Test("a source that arrives takes the input when personal (a headset's microphone), not a webcam's")
    func arrivals() {
        var (engine, _) = Self.engine(Self.graph([]))
        let webcam = Self.source(65, "alsa_input.usb-webcam", ["device.bus": "usb", "device.form-factor": "webcam"])
        var decision = engine.handle(.graphChanged(.node(webcam)), at: 10).decision
        #expect(decision.input?.rejected.first { $0.node == webcam.name }?.rejection.kind == "settling")
        decision = engine.handle(.timerFired, at: 210).decision
        #expect(decision.trigger == .settled("alsa_input.usb-webcam"))
        // A new source ends the held default as a new sink ends the output's; a webcam is not
        // personal, so the user's last choice (the configured microphone) still ranks first.
        #expect(decision.defaultSource == Self.laptopMicrophone && decision.input?.changed == false)
        #expect(decision.input.flatMap { decision.decidedBy(in: $0.ranking) }?.tier == .lastChoice)
        #expect(decision.defaultSink == Sinks.speakers && !decision.changed)
        decision = engine.arrive(Self.headsetMicrophoneNode, at: 220)
        #expect(decision.defaultSource == Self.headsetMicrophone && decision.input?.reason == .newDeviceAvailable)
        #expect(decision.input.flatMap { decision.decidedBy(in: $0.ranking) }?.tier == .arrived)
        #expect(decision.defaultSink == Sinks.speakers, "a microphone arriving moves no output")
        decision = engine.handle(.graphChanged(.removed(Self.headsetMicrophoneNode.id)), at: 430).decision
        #expect(decision.defaultSource == Self.laptopMicrophone && decision.input?.reason == .oldDeviceUnavailable)
    }

    @Test("rules match sources by their media.class; an ignore of a sink's bus leaves microphones alone when it says Audio/Sink")
    func rules() throws {
        let config = try PolicyConfigLoader.parse(
            """
            [[rule]]
            match = { "media.class" = "Audio/Source", "device.bus" = "pci" }
            ignore = true

            [[rule]]
            match = { "media.class" = "Audio/Sink", "device.bus" = "bluetooth" }
            priority = 50
            """, file: "rules.toml")
        // Nothing configured: no default found to hold (a hold would set a rule aside, §5).
        var (engine, decision) = Self.engine(Self.graph([], configuredSource: nil), config: config)
        #expect(decision.input?.rejected.first { $0.node == Self.laptopMicrophone }?.rejection == .ignored(rule: 0))
        #expect(decision.defaultSink == Sinks.speakers, "the output's held default is not touched by a source rule")
        decision = engine.arrive(Self.headsetMicrophoneNode, at: 10)
        #expect(decision.defaultSource == Self.headsetMicrophone)
        #expect(decision.input?.ranking.first?.rank.rule == nil, "the Audio/Sink rule does not rank a source")
    }

    @Test("a headset microphone's jack: unplugged is unavailable, plugged is an arrival (the input's route events)")
    func inputJack() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json"))
        let prefix = "alsa_input.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__"
        var (engine, decision) = Self.engine(graph)
        var input = try #require(decision.input)
        #expect(input.rejected.first { $0.node == prefix + "Mic2__source" }?.rejection == .unavailable(port: "Stereo Microphone"))
        let card = try #require(engine.graph.devices.values.first { $0.routes?.all.contains { $0.name.contains("mic2") || $0.description == "Stereo Microphone" } == true })
        let route = try #require(card.routes?.all.first { $0.description == "Stereo Microphone" && $0.direction == .input })
        var plugged = card
        plugged.routes = try #require(card.routes?.setting(route.name, available: .yes))
        decision = engine.handle(.graphChanged(.device(plugged)), at: 100).decision
        input = try #require(decision.input)
        #expect(input.ranking.contains { $0.node == prefix + "Mic2__source" })
        #expect(decision.defaultSink == "alsa_output.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__HDMI1__sink", "the output is not touched by a microphone jack")
    }

    /// semmelsamu/pipewire-quick-settings (Fixtures/real/README.md): a Bluetooth headset whose
    /// WirePlumber 0.5 `bluez_input.AC:80:…` node is the configured default source, the SOF
    /// laptop's own microphone, an unplugged headset-jack microphone.
    @Test("real capture (SOF laptop + Bluetooth headset), bluetooth-microphone = \"always\": worn takes both, taken off both go to the laptop")
    func realSOFLaptop() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json"))
        let headset = "AC:80:0A:CA:97:12"
        var config = PolicyConfig()
        config.input.bluetoothMicrophone = .always
        var (engine, initial) = Self.engine(graph, config: config)
        #expect(initial.defaultSource == "bluez_input.AC:80:0A:CA:97:12", "the default source found holds")
        #expect(initial.input?.summary == "2/3 sources eligible: 1 unavailable")
        #expect(!engine.graph.captureStreams.contains { $0.name?.hasPrefix("bluez_capture_internal") == true }, "WirePlumber's internal capture is no app")
        var decision = engine.handle(Requests.register(headset, placement: .inEar), at: 10).decision
        #expect(decision.defaultSink == "bluez_output.AC_80_0A_CA_97_12.1" && decision.defaultSource == "bluez_input.AC:80:0A:CA:97:12")
        _ = engine.handle(Requests.place(headset, .offHead), at: 1000)
        decision = Self.settle(&engine, after: decision)
        #expect(decision.defaultSource == "alsa_input.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__Mic1__source")
        #expect(decision.input?.reason == .placementChanged)
    }

    /// TheophileDiot/gnome-sound-modes (Fixtures/real/README.md): AirPods in HFP, whose input
    /// is the configured default source; a TONOR USB microphone and a webcam whose only profile is
    /// S/PDIF-named; EasyEffects' virtual source; WebRTC recording.
    @Test("real capture (AirPods HFP, USB microphones, EasyEffects): off the ears, the laptop's microphone by the system's order; EasyEffects' source only by pick")
    func realAirPodsHFP() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("real/hda-laptop-jack-empty-airpods-hfp-easyeffects-tonor-iec958.json"))
        var (engine, initial) = Self.engine(graph)
        #expect(initial.defaultSource == Self.headphonesMicrophone)
        #expect(initial.input?.rejected.first { $0.node == "easyeffects_source" }?.rejection == .virtual)
        #expect(engine.graph.captureStreams.map(\.name) == ["WEBRTC VoiceEngine"])
        var decision = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .inEar), at: 10).decision
        #expect(decision.defaultSource == Self.headphonesMicrophone)
        _ = engine.handle(Requests.place(Sinks.headphonesAddress, .offHead), at: 1000)
        decision = Self.settle(&engine, after: decision)
        #expect(decision.defaultSource == "alsa_input.pci-0000_00_1f.3.analog-stereo", "\(decision.input?.ranking.map(\.node) ?? [])")
        #expect(decision.input?.rejected.first { $0.node == Self.headphonesMicrophone }?.rejection == .offHead(.address(Requests.address(Sinks.headphonesAddress))))
    }

    @Test("a sink's monitor chosen as the default source is no candidate, but holds as the one found; with no source at all nothing changes")
    func monitorAsDefaultSource() throws {
        // WirePlumber names a sink (its monitor) as default.audio.source when there is no source.
        var graph = Sinks.graph(Sinks.all)
        graph.apply(.metadataProperty(metadata: 30, subject: 0, key: Graph.effectiveSourceKey, type: "Spa:String:JSON", value: #"{"name":"\#(Sinks.speakers)"}"#))
        var (engine, decision) = Self.engine(graph)
        #expect(decision.defaultSource == Sinks.speakers && decision.input?.changed == false && decision.input?.rejected.isEmpty == true)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        decision = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 20).decision
        #expect(decision.defaultSource == Sinks.speakers && decision.input?.changed == false, "nothing better to offer")

        // A user who recorded the desktop's sound on purpose keeps it until the next transition.
        graph = Self.graph(configuredSource: Sinks.speakers)
        (engine, decision) = Self.engine(graph)
        #expect(decision.defaultSource == Sinks.speakers && decision.input?.changed == false)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        decision = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 20).decision
        #expect(decision.defaultSource == Self.headphonesMicrophone && decision.input?.previous == Sinks.speakers)
    }

    @Test("a monitor picked as the default source (pavucontrol's \"Monitor of …\", <sink>.monitor) is the user's: held, never fought, until the next transition")
    func monitorPicked() {
        var (engine, _) = Self.engine()
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        var decision = engine.handle(.userSelectedSource(Sinks.speakers + ".monitor"), at: 20).decision
        #expect(decision.defaultSource == Sinks.speakers + ".monitor" && decision.input?.reason == .userOverride)
        #expect(decision.input?.rejected.contains { $0.rejection == .gone } == false)
        // A source arriving that is not personal ends the pick but not the last choice (§2.5):
        // the monitor stays; the next transition to a worn headset moves it.
        decision = engine.arrive(Self.source(66, "alsa_input.usb-webcam", ["device.bus": "usb"]), at: 30)
        #expect(decision.defaultSource == Sinks.speakers + ".monitor" && decision.input?.changed == false)
        // A headset microphone arriving (personal, §2.3) ranks above a last choice.
        decision = engine.arrive(Self.headsetMicrophoneNode, at: 235)
        #expect(decision.defaultSource == Self.headsetMicrophone)
        decision = engine.handle(.userSelectedSource(Sinks.speakers), at: 440).decision
        #expect(decision.defaultSource == Sinks.speakers)
        decision = engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 450).decision
        #expect(decision.defaultSource == Self.headphonesMicrophone && decision.input?.previous == Sinks.speakers)
        // A name that is no node and no sink's monitor is gone, as for sinks.
        decision = engine.handle(.userSelectedSource("alsa_input.unplugged"), at: 460).decision
        #expect(decision.defaultSource == Self.headphonesMicrophone)
        #expect(decision.input?.rejected.contains { $0.node == "alsa_input.unplugged" && $0.rejection == .gone } == true)
    }

    @Test("the choices the state file keeps come back for a side the graph says nothing of")
    func choicesRestore() {
        var (engine, _) = Self.engine(Self.graph(configuredSource: nil))
        _ = engine.handle(.userSelectedSource(Self.headphonesMicrophone), at: 10)
        let saved = engine.choices(of: .input)
        #expect(saved.lastChoice == Self.headphonesMicrophone && saved.override == Self.headphonesMicrophone)
        // A restart over a graph without a configured default source (standalone).
        var graph = Self.graph(configuredSource: nil)
        graph.apply(.metadataProperty(metadata: 30, subject: 0, key: Graph.effectiveSourceKey, type: "Spa:String:JSON", value: #"{"name":"\#(Self.laptopMicrophone)"}"#))
        var restarted = PolicyEngine(graph: graph, config: PolicyConfig())
        restarted.holdCurrentDefault()
        restarted.restoreChoices(of: .input, lastChoice: saved.lastChoice, override: saved.override, hold: true)
        let decision = restarted.handle(.start, at: 0).decision
        #expect(decision.defaultSource == Self.headphonesMicrophone && restarted.lastSourceChoice == Self.headphonesMicrophone)
        // The found default is not a pick of the user's: it is not saved as one.
        var fresh = PolicyEngine(graph: graph, config: PolicyConfig())
        fresh.holdCurrentDefault()
        #expect(fresh.choices(of: .input).override == nil)
    }
}
