import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// Issue 19: routes, ports and the system's own order, over graphs captured on real machines
/// (Fixtures/real/README.md names each one's source) and over small graphs shaped like them.
@Suite("routes, ports and the system's order")
struct RouteEligibilityTests {
    static func real(_ name: String) throws -> Graph {
        try PwDumpDecoder.decode(contentsOf: fixtureURL("real/\(name).json"))
    }

    static func initial(_ graph: Graph, config: PolicyConfig = PolicyConfig(), hold: Bool = true) -> (PolicyEngine, Decision) {
        var engine = PolicyEngine(graph: graph, config: config)
        if hold { engine.holdCurrentDefault() }
        let decision = engine.handle(.start, at: 0).decision
        return (engine, decision)
    }

    static func rejection(_ decision: Decision, _ node: String) -> Rejection? {
        decision.rejected.first { $0.node == node }?.rejection
    }

    // MARK: Real captures

    /// semmelsamu/pipewire-quick-settings: an SOF laptop whose HDMI 2 and 3 have no monitor.
    @Test("unplugged HDMI outputs are out, named by their port, and never taken when the others go")
    func unpluggedHDMI() throws {
        let graph = try Self.real("sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8")
        let prefix = "alsa_output.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__"
        var (engine, decision) = Self.initial(graph)
        #expect(decision.summary == "3/5 sinks eligible: 2 unavailable")
        #expect(Self.rejection(decision, prefix + "HDMI2__sink") == .unavailable(port: "HDMI / DisplayPort 2 Output"))
        #expect(decision.why(try #require(decision.rejected.first)).contains("port \"HDMI / DisplayPort"))
        #expect(decision.defaultSink == prefix + "HDMI1__sink", "the default found holds")
        // Every other sink goes: the unplugged ones are still not chosen.
        for name in [prefix + "HDMI1__sink", "bluez_output.AC_80_0A_CA_97_12.1", prefix + "Speaker__sink"] {
            let id = try #require(engine.graph.node(named: name)?.id)
            decision = engine.handle(.graphChanged(.removed(id)), at: 10).decision
        }
        #expect(decision.defaultSink == nil)
        #expect(decision.reason == .noSuitableRoute)
    }

    /// TheophileDiot/gnome-sound-modes: AirPods, laptop speakers (empty jack), a TONOR USB
    /// microphone whose only output is S/PDIF, EasyEffects' filter sink.
    @Test("a USB microphone's S/PDIF output is digital, below the laptop speakers, when the AirPods come off")
    func spdifOfAUSBMicrophone() throws {
        let graph = try Self.real("hda-laptop-jack-empty-airpods-hfp-easyeffects-tonor-iec958")
        let tonor = "alsa_output.usb-TONOR_TONOR_TD510_Dynamic_Mic_000000000000000-00.iec958-stereo"
        let speakers = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        var (engine, decision) = Self.initial(graph)
        #expect(decision.defaultSink == "bluez_output.AA_BB_CC_DD_EE_FF.1")
        #expect(decision.ranking.first { $0.node == tonor }?.rank.sinkClass == .digital)
        #expect(decision.ranking.first { $0.node == speakers }?.rank.port == "Speakers")
        #expect(Self.rejection(decision, "easyeffects_sink") == .virtual)
        let airPods = AccessoryIdentity.address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!)
        let register = AccessoryRequest.register(
            airPods, reporter: "org.example.test", AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .inEar))
        decision = engine.handle(.accessory(register), at: 100).decision
        #expect(decision.defaultSink == "bluez_output.AA_BB_CC_DD_EE_FF.1")
        var update = AccessoryUpdate()
        update.placement = .set(.offHead)
        decision = engine.handle(.accessory(.update(airPods, update, reporter: "org.example.test")), at: 200).decision
        let due = try #require(engine.nextDeadline)
        decision = engine.handle(.timerFired, at: due).decision
        #expect(decision.defaultSink == speakers, "\(decision.ranking.map(\.node))")
        #expect(decision.decidedBy?.tier == .classOrder)
    }

    /// codifryed/priel: a DAC in a pro-audio profile (priority.session 1600, no routes) and a
    /// "Generic USB Audio" speaker sink (1100), both USB: the system's order decides, not the name.
    @Test("a pro-audio DAC beats a generic USB sink at session-priority, not by name")
    func sessionPriorityBreaksTheTie() throws {
        let graph = try Self.real("usb-dac-pro-audio-smsl-pw1.6")
        let (_, decision) = Self.initial(graph)
        #expect(decision.defaultSink == "alsa_output.usb-SMSL_SMSL_USB_AUDIO-00.pro-output-0")
        #expect(decision.decidedBy?.tier == .sessionPriority)
        #expect(decision.decidedBy?.why.contains("priority.session 1600 vs 1100") == true)
        let terms = decision.explanation(of: decision.ranking[0]).terms.map(\.tier)
        #expect(terms.contains(.sessionPriority))
    }

    /// millionrust/lulo: only `default.audio.sink`, the user never picked one.
    @Test("starting with only the effective default changes nothing")
    func startHoldsTheEffectiveDefault() throws {
        let graph = try Self.real("hda-laptop-jack-empty-no-configured-default-pw1.6.2")
        #expect(graph.configuredDefaultSinkName == nil)
        let (_, decision) = Self.initial(graph)
        #expect(decision.defaultSink == "alsa_output.pci-0000_00_1b.0.analog-stereo")
        #expect(!decision.changed)
        #expect(decision.ranking[0].rank.override)
    }

    @Test("the default found holds until something happens, and says so (the daemon then writes nothing)")
    func holdsFoundDefault() throws {
        let graph = try Self.real("hda-laptop-jack-empty-no-configured-default-pw1.6.2")
        var (engine, _) = Self.initial(graph)
        #expect(engine.holdsFoundDefault)
        _ = engine.handle(.userSelectedDefault("alsa_output.pci-0000_00_1b.0.analog-stereo"), at: 10)
        #expect(!engine.holdsFoundDefault, "a pick is the user's, written as any")
        var fresh = Self.initial(graph).0
        let arriving = Node(id: 900, props: ["node.name": "alsa_output.usb-headset", "media.class": "Audio/Sink", "device.form-factor": "headset"], inputPorts: 2)
        fresh.arrive(arriving, at: 20)
        #expect(!fresh.holdsFoundDefault && fresh.currentDefault == "alsa_output.usb-headset")
    }

    @Test("a jack: headphones plugged in are an arrival on the same sink; pulled out, old-device-unavailable")
    func jackOnTheSameSink() throws {
        let graph = try Self.real("hda-laptop-jack-empty-no-configured-default-pw1.6.2")
        var (engine, _) = Self.initial(graph)
        let card = try #require(engine.graph.devices.values.first { $0.props["device.name"] == "alsa_card.pci-0000_00_1b.0" })
        var plugged = card
        plugged.routes = try #require(card.routes?.setting("analog-output-headphones", available: .yes, activate: true))
        var decision = engine.handle(.graphChanged(.device(plugged)), at: 1000).decision
        #expect(decision.portEvent == PortEvent(kind: .plugged, sink: "alsa_output.pci-0000_00_1b.0.analog-stereo", port: "Headphones"))
        #expect(decision.reason == .newDeviceAvailable && !decision.changed && decision.routeChanged)
        #expect(decision.port == "Headphones" && decision.previousPort == "Speakers")
        #expect(decision.ranking[0].rank.sinkClass == .headphones)
        var unplugged = plugged
        unplugged.routes = try #require(plugged.routes?.setting("analog-output-headphones", available: .no))
        decision = engine.handle(.graphChanged(.device(unplugged)), at: 2000).decision
        #expect(decision.portEvent == PortEvent(kind: .unplugged, sink: "alsa_output.pci-0000_00_1b.0.analog-stereo", port: "Headphones"))
        #expect(decision.reason == .oldDeviceUnavailable)
        #expect(decision.defaultSink == "alsa_output.pci-0000_00_1b.0.analog-stereo", "the speaker route is still there")
    }

    // MARK: Graphs shaped like real ones

    /// Shaped like a Dell XPS 17 (SoundWire): Speaker and Headphones are separate sinks of one
    /// card, on card.profile.device 0 and 1; the jack is empty (priority 1000 vs 712).
    static func sofLaptop(headphones available: RouteAvailability, configured: String? = nil, effective: String? = nil) -> Graph {
        var graph = Graph()
        let routes = DeviceRoutes(
            all: [
                DeviceRoute(index: 0, direction: .output, name: "Speaker", description: "Speaker", priority: 100, available: .unknown, portType: "speaker", devices: [0], profiles: [1]),
                DeviceRoute(index: 1, direction: .output, name: "Headphones", description: "Headphones", priority: 200, available: available, portType: "headphones", devices: [1], profiles: [1]),
            ],
            active: [
                DeviceRoute(index: 0, direction: .output, name: "Speaker", description: "Speaker", priority: 100, available: .unknown, portType: "speaker", devices: [0], profiles: [1], device: 0, profile: 1),
                DeviceRoute(index: 1, direction: .output, name: "Headphones", description: "Headphones", priority: 200, available: available, portType: "headphones", devices: [1], profiles: [1], device: 1, profile: 1),
            ],
            profile: 1)
        graph.apply(.device(Device(id: 50, props: ["device.name": "alsa_card.sof-soundwire", "device.bus": "pci"], routes: routes)))
        for (id, name, cpd, priority) in [(60 as ObjectID, "alsa_output.sof.Speaker__sink", 0, 1000), (61, "alsa_output.sof.Headphones__sink", 1, 712)] {
            graph.apply(.node(Node(id: id, props: [
                "node.name": name, "media.class": "Audio/Sink", "device.id": "50", "card.profile.device": String(cpd),
                "priority.session": String(priority), "device.bus": "pci",
            ], inputPorts: 2)))
        }
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        if let configured { metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(configured)"}"#) }
        if let effective { metadata.set(subject: 0, key: Graph.effectiveSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(effective)"}"#) }
        graph.apply(.metadata(metadata))
        return graph
    }

    @Test("an empty jack's sink is never chosen at start, even without a default")
    func emptyJackAtStart() {
        let (_, decision) = Self.initial(Self.sofLaptop(headphones: .no))
        #expect(decision.defaultSink == "alsa_output.sof.Speaker__sink")
        #expect(Self.rejection(decision, "alsa_output.sof.Headphones__sink") == .unavailable(port: "Headphones"))
    }

    @Test("headphones plugged into their own sink take the output; pulled, the output returns and the pick ends")
    func pluggedSinkArrives() throws {
        var (engine, decision) = Self.initial(Self.sofLaptop(headphones: .no, effective: "alsa_output.sof.Speaker__sink"))
        #expect(decision.defaultSink == "alsa_output.sof.Speaker__sink" && !decision.changed)
        var card = try #require(engine.graph.devices[50])
        card.routes = card.routes?.setting("Headphones", available: .yes)
        decision = engine.handle(.graphChanged(.device(card)), at: 1000).decision
        #expect(decision.defaultSink == "alsa_output.sof.Headphones__sink")
        #expect(decision.reason == .newDeviceAvailable && decision.decidedBy?.tier == .arrived)
        #expect(decision.portEvent?.kind == OpenEnum(.plugged))
        // The user picks the headphones by hand, then pulls the plug: the pick ends like a gone sink's.
        decision = engine.handle(.userSelectedDefault("alsa_output.sof.Headphones__sink"), at: 1500).decision
        card.routes = card.routes?.setting("Headphones", available: .no)
        decision = engine.handle(.graphChanged(.device(card)), at: 2000).decision
        #expect(decision.defaultSink == "alsa_output.sof.Speaker__sink")
        #expect(decision.reason == .oldDeviceUnavailable)
        #expect(decision.portEvent == PortEvent(kind: .unplugged, sink: "alsa_output.sof.Headphones__sink", port: "Headphones"))
        #expect(engine.userOverride == nil)
        card.routes = card.routes?.setting("Headphones", available: .yes)
        decision = engine.handle(.graphChanged(.device(card)), at: 3000).decision
        #expect(decision.defaultSink == "alsa_output.sof.Headphones__sink", "plugged again: an arrival again")
    }

    @Test("a sink without input ports is out until they appear")
    func noPortsYet() {
        var graph = Self.sofLaptop(headphones: .no, effective: "alsa_output.sof.Speaker__sink")
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        engine.holdCurrentDefault()
        _ = engine.handle(.start, at: 0)
        let portless = Node(id: 70, props: [
            "node.name": "alsa_output.usb-headset.analog-stereo", "media.class": "Audio/Sink", "device.bus": "usb",
            "device.form-factor": "headset",
        ], inputPorts: 0)
        var decision = engine.handle(.graphChanged(.node(portless)), at: 100).decision
        #expect(Self.rejection(decision, portless.name!) == .noPorts)
        #expect(decision.defaultSink == "alsa_output.sof.Speaker__sink", "a portless sink does not take the output")
        var ready = portless
        ready.inputPorts = 2
        decision = engine.handle(.graphChanged(.node(ready)), at: 150).decision
        #expect(decision.defaultSink == "alsa_output.sof.Speaker__sink", "still settling (§1)")
        decision = engine.handle(.timerFired, at: 300).decision
        #expect(decision.defaultSink == portless.name, "it arrived at 100 ms: settled, with ports, it takes the output")
        graph = engine.graph
        #expect(graph.nodes[70]?.inputPorts == 2)
    }

    @Test("virtual sinks: only by the user's pick or a rule")
    func virtualSinks() throws {
        var graph = Self.sofLaptop(headphones: .no, effective: "alsa_output.sof.Speaker__sink")
        graph.apply(.node(Node(id: 80, props: ["node.name": "easyeffects_sink", "media.class": "Audio/Sink", "node.virtual": "true"], inputPorts: 2)))
        graph.apply(.node(Node(id: 81, props: ["node.name": "filter-chain.sink", "media.class": "Audio/Sink/Virtual"], inputPorts: 2)))
        var (engine, decision) = Self.initial(graph)
        #expect(Self.rejection(decision, "easyeffects_sink") == .virtual)
        #expect(Self.rejection(decision, "filter-chain.sink") == .virtual)
        decision = engine.handle(.userSelectedDefault("easyeffects_sink"), at: 10).decision
        #expect(decision.defaultSink == "easyeffects_sink")
        let ruled = try PolicyConfigLoader.parse("[[rule]]\nmatch = { \"node.name\" = \"filter-chain.*\" }\npriority = 10\n", file: "t.toml")
        let (_, withRule) = Self.initial(graph, config: ruled, hold: false)
        #expect(withRule.defaultSink == "filter-chain.sink")
    }

    @Test("classes come from the port type first", arguments: [
        ("headphones", SinkClass.headphones), ("headset", .headset), ("speaker", .speaker), ("hdmi", .hdmi),
        ("spdif", .digital), ("line", .line), ("analog", nil), ("unknown", nil),
    ] as [(String, SinkClass?)])
    func classFromPort(_ type: String, _ expected: SinkClass?) {
        #expect(SinkClass.of(portType: type) == expected)
    }

    @Test("an old tier-order without session-priority still loads, the new tier after class-order")
    func oldTierOrderLoads() throws {
        let config = try PolicyConfigLoader.parse(
            "tier-order = [\"worn\", \"override\", \"restore\", \"arrived\", \"last-choice\", \"rule-priority\", \"class-order\"]\n", file: "t.toml")
        #expect(config.tierOrder == [.worn, .override, .restore, .arrived, .lastChoice, .rulePriority, .classOrder, .sessionPriority])
    }

    @Test("eval route events: parsed, run, and refused with where and why")
    func evalRouteEvents() throws {
        let graph = try Self.real("hda-laptop-jack-empty-no-configured-default-pw1.6.2")
        let script = """
            {"at": 1000, "route": {"device": "alsa_card.pci-0000_00_1b.0", "route": "analog-output-headphones", "available": "yes", "active": true}}
            {"at": 2000, "route": {"device": "alsa_card.pci-0000_00_1b.0", "route": "analog-output-headphones", "available": "no"}}
            """
        var reasons: [String] = []
        try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [], events: try EvalScript.parse(script)) { decision, _ in
            reasons.append(decision.reason?.rawValue ?? "-")
        }
        #expect(reasons == ["initial", "new-device-available", "old-device-unavailable"])
        #expect(throws: EvalScriptError.self) { try EvalScript.parse(#"{"at": 0, "route": {"device": "x", "route": "y", "available": "maybe"}}"#) }
        let missing = #"{"at": 0, "route": {"device": "alsa_card.nope", "route": "y", "available": "no"}}"#
        #expect {
            try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [], events: try EvalScript.parse(missing)) { _, _ in }
        } throws: { error in
            (error as? EvalScriptError)?.message.contains("no device named \"alsa_card.nope\"") == true
        }
    }
}
