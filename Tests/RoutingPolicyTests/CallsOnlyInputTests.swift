import WireFields
import AudioGraph
import Foundation
import RoutingPolicy
import Testing

/// Issue 32: a worn Bluetooth headset keeps its music quality; its microphone is for calls
/// (docs/policy.md §8 `bluetooth-microphone`), over the real captures that have a Bluetooth
/// headset and another microphone, and over the profile switches WirePlumber 0.4 and 0.5 make.
@Suite("the input: a Bluetooth headset's microphone for calls only")
struct CallsOnlyInputTests {
    /// semmelsamu/pipewire-quick-settings `pw_dump.json` (Fixtures/real/README.md): a SOF laptop,
    /// a WH-1000XM5 playing A2DP (LDAC) with WirePlumber 0.5's `bluez_input.AC:80:…` loopback.
    static let sof = "real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json"
    static let headset = "AC:80:0A:CA:97:12"
    static let loopback = "bluez_input.AC:80:0A:CA:97:12"
    static let headsetSink = "bluez_output.AC_80_0A_CA_97_12.1"
    static let laptopMicrophone = "alsa_input.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__Mic1__source"

    static func stream(_ id: ObjectID, _ props: Properties) -> Node {
        var all = props
        all["media.class"] = "Stream/Input/Audio"
        all["object.serial"] = String(5000 + id)
        all["node.name"] = all["node.name"] ?? all["application.name"] ?? "stream-\(id)"
        return Node(id: id, state: .running, props: all, inputPorts: 1, outputPorts: 0)
    }

    static let pwRecord = stream(400, ["application.name": "pw-record", "media.role": "Music", "target.object": "auto"])
    static let callByRole = stream(401, ["application.name": "Some Softphone", "media.role": "Communication"])
    static let callByName = stream(402, ["application.name": "Chromium input"])

    static func worn(_ config: PolicyConfig = PolicyConfig()) throws -> (PolicyEngine, Decision) {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL(sof))
        var engine = PolicyEngine(graph: graph, config: config)
        engine.holdCurrentDefault()
        _ = engine.handle(.start, at: 0)
        let decision = engine.handle(Requests.register(headset, placement: .inEar), at: 10).decision
        return (engine, decision)
    }

    static func settle(_ engine: inout PolicyEngine) -> Decision? {
        var last: Decision?
        while let due = engine.nextDeadline { last = engine.handle(.timerFired, at: due).decision }
        return last
    }

    @Test("real capture (SOF laptop + WH-1000XM5 in A2DP): worn, the output goes to the headset and the default source stays the laptop's microphone, said why")
    func wornKeepsA2DP() throws {
        let (engine, decision) = try Self.worn()
        #expect(decision.defaultSink == Self.headsetSink)
        let input = try #require(decision.input)
        #expect(input.defaultSource == Self.laptopMicrophone)
        #expect(!input.changed, "the start already left the headset's input")
        #expect(input.rejected.first { $0.node == Self.loopback }?.rejection == .callsOnly(handsFree: false))
        #expect(input.summary == "1/3 sources eligible: 1 unavailable, 1 calls-only")
        let why = try #require(input.rejected.first { $0.node == Self.loopback }.map(decision.why))
        #expect(why.contains("keeps A2DP: calls only"))
        #expect(decision.calls?.source == Self.loopback, "calls would go to the worn headset")
        #expect(decision.calls?.streams.isEmpty == true && decision.calls?.moves.isEmpty == true)
        #expect(engine.graph.captureStreams.isEmpty)
    }

    @Test("at start, the headset's input found as the default (WirePlumber 0.5 makes it so) is not held: the first decision gives the input to the laptop's microphone")
    func notHeldAtStart() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL(Self.sof))
        #expect(graph.configuredDefaultSourceName == Self.loopback)
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        engine.holdCurrentDefault()
        #expect(!engine.holdsFoundSource)
        let initial = engine.handle(.start, at: 0).decision
        #expect(initial.defaultSource == Self.laptopMicrophone && initial.input?.reason == .initial)
        #expect(initial.calls?.source == nil, "not worn, and the output plays elsewhere: calls go nowhere of their own")
        // The rule "always" holds it, as before.
        var always = PolicyConfig()
        always.input.bluetoothMicrophone = .always
        engine = PolicyEngine(graph: graph, config: always)
        engine.holdCurrentDefault()
        #expect(engine.handle(.start, at: 0).decision.defaultSource == Self.loopback)
    }

    @Test("a recorder stays on the laptop's microphone; a Communication stream and a browser's call go to the headset, and back when it comes off")
    func callsFollowTheHeadset() throws {
        var (engine, _) = try Self.worn()
        var decision = engine.handle(.graphChanged(.node(Self.pwRecord)), at: 100).decision
        #expect(decision.calls?.streams.isEmpty == true && decision.calls?.moves.isEmpty == true, "pw-record (media.role Music) is no call")

        let outcome = engine.handle(.graphChanged(.node(Self.callByRole)), at: 200)
        #expect(!outcome.isUnchanged, "a call's stream is decided")
        decision = outcome.decision
        let moved = try #require(decision.calls?.moves.first)
        #expect(moved.kind == .call && moved.stream == Self.callByRole.id && moved.from == nil && moved.to == Self.loopback)
        #expect(moved.role == "Communication" && moved.application == "Some Softphone" && moved.serial == Self.callByRole.serial)
        #expect(decision.calls?.streams.map(\.why) == ["media.role = Communication"])
        #expect(decision.defaultSource == Self.laptopMicrophone && decision.input?.changed == false)

        decision = engine.handle(.graphChanged(.node(Self.callByName)), at: 300).decision
        #expect(decision.calls?.moves.map(\.stream) == [Self.callByName.id])
        #expect(decision.calls?.streams.map(\.stream).sorted() == [Self.callByRole.id, Self.callByName.id])
        #expect(decision.calls?.streams.first { $0.stream == Self.callByName.id }?.why == #"application.name "Chromium input" is in call-applications"#)

        // The same stream again (a state change): nothing new to decide about calls.
        var running = Self.callByName
        running.state = .idle
        #expect(engine.handle(.graphChanged(.node(running)), at: 350).decision.calls?.moves.isEmpty != false)

        _ = engine.handle(Requests.place(Self.headset, .offHead), at: 1000)
        decision = try #require(Self.settle(&engine))
        #expect(decision.defaultSink != Self.headsetSink)
        #expect(decision.calls?.source == nil)
        let back = try #require(decision.calls?.moves)
        #expect(back.map(\.kind.known) == [.back, .back] && back.allSatisfy { $0.from == Self.loopback && $0.to == nil })
        #expect(decision.calls?.streams.isEmpty == true)

        // On again: the calls go back to the headset; a call that ends leaves nothing pointed.
        decision = engine.handle(Requests.place(Self.headset, .inEar), at: 5000).decision
        decision = Self.settle(&engine) ?? decision
        #expect(decision.calls?.streams.count == 2)
        decision = engine.handle(.graphChanged(.removed(Self.callByRole.id)), at: 6000).decision
        #expect(decision.calls?.streams.map(\.stream) == [Self.callByName.id] && decision.calls?.moves.isEmpty == true)
    }

    @Test("\"always\" is 0.9's behaviour: the worn headset's input becomes the default source and nothing is pointed")
    func always() throws {
        var config = PolicyConfig()
        config.input.bluetoothMicrophone = .always
        var (engine, decision) = try Self.worn(config)
        #expect(decision.defaultSource == Self.loopback && decision.calls == nil)
        decision = engine.handle(.graphChanged(.node(Self.callByRole)), at: 200).decision
        #expect(decision.calls == nil)
    }

    @Test("\"never\": no Bluetooth microphone by itself, calls included; a pick of one still holds")
    func never() throws {
        var config = PolicyConfig()
        config.input.bluetoothMicrophone = .never
        var (engine, decision) = try Self.worn(config)
        #expect(decision.defaultSource == Self.laptopMicrophone)
        #expect(decision.input?.rejected.first { $0.node == Self.loopback }?.rejection == .bluetoothNever)
        decision = engine.handle(.graphChanged(.node(Self.callByRole)), at: 200).decision
        #expect(decision.calls == nil)
        decision = engine.handle(.userSelectedSource(Self.loopback), at: 300).decision
        #expect(decision.defaultSource == Self.loopback)
    }

    @Test("a reload from \"calls\" to \"always\" gives the pointed calls back to the default source, which is now the headset's")
    func reloadGivesBack() throws {
        var (engine, _) = try Self.worn()
        _ = engine.handle(.graphChanged(.node(Self.callByRole)), at: 200)
        var config = PolicyConfig()
        config.input.bluetoothMicrophone = .always
        let decision = engine.handle(.configReplaced(config), at: 300).decision
        #expect(decision.defaultSource == Self.loopback)
        #expect(decision.calls?.moves.map(\.kind.known) == [.back])
        #expect(decision.calls?.streams.isEmpty == true)
        #expect(engine.handle(.graphChanged(.node(Self.callByName)), at: 400).decision.calls == nil, "nothing pointed any more: no calls said")
    }

    @Test("a call that chose its source (its own target.object, node.dont-move) or that someone moved (pavucontrol writes a serial) is left alone")
    func ownChoicesHold() throws {
        var (engine, _) = try Self.worn()
        let pinned = Self.stream(403, ["media.role": "Communication", "target.object": Self.laptopMicrophone])
        let fixed = Self.stream(404, ["media.role": "Communication", "node.dont-move": "true"])
        var decision = engine.handle(.graphChanged(.node(pinned)), at: 100).decision
        decision = engine.handle(.graphChanged(.node(fixed)), at: 110).decision
        #expect(decision.calls?.streams.isEmpty == true)
        decision = engine.handle(.graphChanged(.node(Self.callByRole)), at: 200).decision
        #expect(decision.calls?.streams.map(\.stream) == [Self.callByRole.id])
        // The user moves the call to the laptop's microphone: target.node and target.object
        // (the serial) in the default metadata, as pipewire-pulse writes for pavucontrol.
        let metadata = try #require(engine.graph.defaultMetadata?.id)
        _ = engine.handle(.graphChanged(.metadataProperty(metadata: metadata, subject: Self.callByRole.id, key: "target.node", type: "Spa:Id", value: "60")), at: 300)
        decision = engine.handle(
            .graphChanged(.metadataProperty(metadata: metadata, subject: Self.callByRole.id, key: "target.object", type: "Spa:Id", value: "5060")), at: 301
        ).decision
        #expect(decision.calls?.streams.isEmpty == true, "the user's move is theirs")
        #expect(decision.calls?.moves.isEmpty == true, "nothing for Earshot to write")
        _ = engine.handle(Requests.place(Self.headset, .offHead), at: 1000)
        #expect(Self.settle(&engine)?.calls?.moves.isEmpty == true)
    }

    @Test("a target naming the headset's input that Earshot did not write (an earlier Earshot's, before a restart) is taken back from a stream that is no call, and kept for a call")
    func staleTargets() throws {
        var (engine, _) = try Self.worn()
        let metadata = try #require(engine.graph.defaultMetadata?.id)
        // A dictation tool an earlier Earshot pointed at the headset (a call then; the config
        // changed since).
        let dictation = Self.stream(405, ["application.name": "nerd-dictation"])
        _ = engine.handle(.graphChanged(.node(dictation)), at: 100)
        var decision = engine.handle(
            .graphChanged(.metadataProperty(metadata: metadata, subject: dictation.id, key: "target.object", type: nil, value: Self.loopback)), at: 101
        ).decision
        let stale = try #require(decision.calls?.moves.first)
        #expect(stale.kind == .staleTarget && stale.stream == dictation.id && stale.from == Self.loopback && stale.to == nil)
        // Its removal echoes: nothing more.
        decision = engine.handle(
            .graphChanged(.metadataProperty(metadata: metadata, subject: dictation.id, key: "target.object", type: nil, value: nil)), at: 102
        ).decision
        #expect(decision.calls?.moves.isEmpty == true)

        // A call restored to the headset while it is worn is adopted: pointed, no write.
        let call = Self.stream(406, ["application.name": "Firefox"])
        _ = engine.handle(.graphChanged(.metadataProperty(metadata: metadata, subject: call.id, key: "target.object", type: nil, value: Self.loopback)), at: 200)
        decision = engine.handle(.graphChanged(.node(call)), at: 201).decision
        #expect(decision.calls?.streams.map(\.stream) == [call.id])
        #expect(decision.calls?.moves.isEmpty == true)
        // Off the head: taken back, as any call pointed there.
        _ = engine.handle(Requests.place(Self.headset, .offHead), at: 1000)
        #expect(Self.settle(&engine)?.calls?.moves.map(\.kind.known) == [.back])
    }

    @Test("WirePlumber 0.4: no input while A2DP plays; a call switches the headset to hands-free, whose microphone is then the call's only, until it plays music again")
    func handsFreeForACall() throws {
        var graph = Sinks.graph(Sinks.all + [InputPolicyTests.laptopMicrophoneNode])
        let device = Device(id: 91, props: ["device.name": "bluez_card.AA_BB_CC_DD_EE_FF", "api.bluez5.address": Sinks.headphonesAddress, "device.bus": "bluetooth"])
        graph.apply(.device(device))
        let a2dp = try #require(graph.node(named: Sinks.headphones))
        var music = a2dp
        music.props["device.id"] = "91"
        music.props["api.bluez5.profile"] = "a2dp-sink"
        graph.apply(.node(music))
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        _ = engine.handle(.start, at: 0)
        var decision = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .onHead), at: 10).decision
        #expect(decision.defaultSink == Sinks.headphones && decision.calls?.source == nil)

        // A call starts; WirePlumber 0.4 switches the headset to headset-head-unit: the sink
        // comes back in that profile and a microphone appears.
        _ = engine.handle(.graphChanged(.node(Self.callByName)), at: 100)
        var handsFree = music
        handsFree.props["api.bluez5.profile"] = "headset-head-unit"
        _ = engine.handle(.graphChanged(.node(handsFree)), at: 200)
        let microphone = InputPolicyTests.source(
            70, "bluez_input.AA_BB_CC_DD_EE_FF.0",
            ["device.id": "91", "api.bluez5.profile": "headset-head-unit", "device.form-factor": "headset", "api.bluez5.address": Sinks.headphonesAddress])
        decision = engine.arrive(microphone, at: 210)
        #expect(decision.defaultSource == InputPolicyTests.laptopMicrophone, "the hands-free microphone is the call's, not every recorder's")
        #expect(decision.input?.rejected.first { $0.node == microphone.name }?.rejection == .callsOnly(handsFree: true))
        #expect(decision.calls?.source == microphone.name && decision.calls?.streams.map(\.stream) == [Self.callByName.id])

        // The call ends; WirePlumber restores A2DP 2 s later. Meanwhile nothing flips.
        decision = engine.handle(.graphChanged(.removed(Self.callByName.id)), at: 300).decision
        #expect(decision.defaultSource == InputPolicyTests.laptopMicrophone && decision.calls?.streams.isEmpty == true)
        _ = engine.handle(.graphChanged(.removed(microphone.id)), at: 2300)
        decision = engine.handle(.graphChanged(.node(music)), at: 2310).decision
        #expect(decision.defaultSource == InputPolicyTests.laptopMicrophone)

        // A user who picks the hands-free profile with no call: its microphone ranks as any.
        _ = engine.handle(.graphChanged(.node(handsFree)), at: 3000)
        decision = engine.arrive(microphone, at: 3010)
        #expect(decision.defaultSource == microphone.name)
    }

    /// TheophileDiot/gnome-sound-modes (Fixtures/real/README.md): AirPods already in HFP (a
    /// profile the user chose), WebRTC recording with a target someone set (EasyEffects' source).
    @Test("real capture (AirPods in HFP, Discord's WebRTC moved to EasyEffects): a hands-free headset ranks as before, and a moved call is left alone")
    func airPodsHandsFree() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL("real/hda-laptop-jack-empty-airpods-hfp-easyeffects-tonor-iec958.json"))
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        engine.holdCurrentDefault()
        _ = engine.handle(.start, at: 0)
        let decision = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .inEar), at: 10).decision
        #expect(decision.defaultSource == InputPolicyTests.headphonesMicrophone)
        #expect(decision.calls?.source == nil && decision.calls?.streams.isEmpty == true && decision.calls?.moves.isEmpty == true)
    }

    @Test("call-applications: a listed name is a call, the default list is WirePlumber 0.4's, and bad lists are refused where they are")
    func callApplicationsConfig() throws {
        #expect(PolicyConfig.builtIn.input.callApplications.count == 14)
        #expect(PolicyConfig.builtIn.input.callApplications.contains("WEBRTC VoiceEngine"))
        #expect(PolicyConfig.builtIn.input.bluetoothMicrophone == .calls)
        let config = try PolicyConfigLoader.parse(
            """
            [input]
            bluetooth-microphone = "calls"
            call-applications = ["Jitsi Meet"]
            """, file: "calls.toml")
        #expect(config.input.callApplications == ["Jitsi Meet"])
        var (engine, _) = try Self.worn(config)
        var decision = engine.handle(.graphChanged(.node(Self.callByName)), at: 100).decision
        #expect(decision.calls?.streams.isEmpty == true, "Chromium is not listed any more")
        decision = engine.handle(.graphChanged(.node(Self.stream(407, ["application.name": "Jitsi Meet"]))), at: 200).decision
        #expect(decision.calls?.streams.map(\.stream) == [407])

        for (text, message) in [
            (#"call-applications = "Firefox""#, "input.call-applications must be an array of strings, not a string"),
            (#"call-applications = ["Firefox", ""]"#, "an empty string is not allowed"),
            ("call-applications = [\"\(String(repeating: "x", count: 300))\"]", "a string of 300 bytes is not allowed"),
            ("call-applications = [" + (0..<300).map { "\"a\($0)\"" }.joined(separator: ", ") + "]", "holds 300 strings; at most 256"),
            (#"bluetooth-microphone = "sometimes""#, #"must be one of calls, always, never, not "sometimes""#),
        ] {
            #expect(throws: ConfigErrors.self) { try PolicyConfigLoader.parse("[input]\n" + text, file: "bad.toml") }
            do {
                _ = try PolicyConfigLoader.parse("[input]\n" + text, file: "bad.toml")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
                #expect("\(error)".contains("bad.toml:2"), "\(error)")
            }
        }
    }

    @Test("a thousand calls: each pointed once, all back in the one decision the headset comes off in; state ends empty")
    func manyCalls() throws {
        var (engine, _) = try Self.worn()
        var pointed = 0
        for index in 0..<1000 {
            let stream = Self.stream(ObjectID(1000 + index), ["media.role": "Communication", "application.name": "call \(index)"])
            pointed += engine.handle(.graphChanged(.node(stream)), at: Milliseconds(100 + index)).decision.calls?.moves.count ?? 0
        }
        #expect(pointed == 1000)
        #expect(engine.streamTargets.pointed.count == 1000)
        _ = engine.handle(Requests.place(Self.headset, .offHead), at: 5000)
        let off = try #require(Self.settle(&engine))
        #expect(off.calls?.moves.count == 1000 && off.calls?.moves.allSatisfy { $0.kind == .back } == true)
        #expect(engine.streamTargets.pointed.isEmpty && engine.streamTargets.released.count == 1000)
        for index in 0..<1000 { _ = engine.handle(.graphChanged(.removed(ObjectID(1000 + index))), at: Milliseconds(6000 + index)) }
        #expect(engine.streamTargets.isEmpty)
    }
}
