import WireFields
import AudioGraph
import EarshotDaemon
import RoutingPolicy
import TestScheduling
import Testing

/// MPRIS pause/resume as data: which routing decisions pause, which resume, and what is
/// remembered in between. Decisions come from a real PolicyEngine.
@Suite("Playback policy", .blockingCalls)
struct PlaybackPolicyTests {
    static let speakers = "alsa_output.sandbox.analog-stereo"
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
    static let accessory = AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!
    static let mpv = MediaPlayer(busName: "org.mpris.MediaPlayer2.mpv.instance100", processID: 100, connection: ":1.7")
    static let vlc = MediaPlayer(busName: "org.mpris.MediaPlayer2.vlc", processID: 200, connection: ":1.9")

    static func sink(_ id: ObjectID, _ name: String, _ props: Properties) -> Node {
        Node(id: id, props: props.merging(["node.name": name, "media.class": "Audio/Sink", "object.serial": String(id)]) { a, _ in a })
    }

    static var graph: Graph {
        var graph = Graph()
        graph.apply(.node(sink(40, speakers, ["device.bus": "pci", "device.form-factor": "internal"])))
        graph.apply(.node(sink(43, headphones, ["device.bus": "bluetooth", "device.form-factor": "headphone", "api.bluez5.address": "AA:BB:CC:DD:EE:FF"])))
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(speakers)"}"#)
        graph.apply(.metadata(metadata))
        return graph
    }

    /// An engine and the playback policy fed every decision in turn, as the daemon does.
    struct Harness {
        var engine: PolicyEngine
        var policy = PlaybackPolicy()
        var last: Decision?

        init(_ configure: (inout PlaybackConfig) -> Void = { _ in }) {
            var config = PolicyConfig()
            config.offGrace = 400
            configure(&config.playback)
            engine = PolicyEngine(graph: PlaybackPolicyTests.graph, config: config)
            _ = step(.start, at: 0)
        }

        @discardableResult
        mutating func step(_ input: PolicyInput, at now: Milliseconds) -> [PlaybackPolicy.Cue] {
            let decision = engine.handle(input, at: now).decision
            let cues = policy.react(to: decision, after: last, config: engine.config.playback)
            last = decision
            return cues
        }

        mutating func place(_ placement: Placement, at now: Milliseconds) -> [PlaybackPolicy.Cue] {
            step(.accessory(.update(PlaybackPolicyTests.accessory, AccessoryUpdate(placement: .set(placement)))), at: now)
        }

        /// Registered on-head at 0: the headphones hold the default.
        static func worn(_ configure: (inout PlaybackConfig) -> Void = { _ in }) -> Harness {
            var harness = Harness(configure)
            let configuration = AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .onHead)
            harness.step(.accessory(.register(PlaybackPolicyTests.accessory, reporter: "org.earshot.test", configuration)), at: 0)
            return harness
        }

        /// Worn, then off the head at 1000; the grace ends at 1400 and pauses `players`.
        static func pausedAt1400(_ players: [MediaPlayer], _ configure: (inout PlaybackConfig) -> Void = { _ in }) -> Harness {
            var harness = worn(configure)
            _ = harness.place(.offHead, at: 1000)
            let cues = harness.step(.timerFired, at: 1400)
            if case .pause(let pause)? = cues.first { harness.policy.record(players, for: pause, at: 1400, config: harness.engine.config.playback) }
            return harness
        }
    }

    static let removal = PlaybackPolicy.Cue.pause(.init(reason: .accessoryRemoved, sink: headphones, accessory: accessory))

    @Test("off the head: nothing during the grace, a pause when the default leaves the headphones")
    func pauseAfterGrace() {
        var harness = Harness.worn()
        #expect(harness.engine.currentDefault == Self.headphones)
        #expect(harness.place(.offHead, at: 1000).isEmpty)
        #expect(harness.step(.timerFired, at: 1400) == [Self.removal])
        #expect(harness.engine.currentDefault == Self.speakers)
    }

    @Test("a flap inside the grace pauses nothing")
    func flap() {
        var harness = Harness.worn()
        #expect(harness.place(.offHead, at: 1000).isEmpty)
        #expect(harness.place(.onHead, at: 1200).isEmpty)
        #expect(harness.step(.timerFired, at: 1400).isEmpty)
    }

    @Test("the worn headphones' sink disappears: a pause with reason sink-removed")
    func sinkRemoved() {
        var harness = Harness.worn()
        let cues = harness.step(.graphChanged(.removed(43)), at: 2000)
        #expect(cues == [.pause(.init(reason: .sinkRemoved, sink: Self.headphones, accessory: Self.accessory))])
    }

    @Test("the default moving away for another reason (a pick by hand) pauses nothing")
    func userPick() {
        var harness = Harness.worn()
        #expect(harness.step(.userSelectedDefault(Self.speakers), at: 1000).isEmpty)
        #expect(harness.engine.currentDefault == Self.speakers)
    }

    @Test("an accessory that never held the default pauses nothing when it comes off")
    func notHoldingTheDefault() {
        var harness = Harness.worn()
        harness.step(.userSelectedDefault(Self.speakers), at: 500)
        #expect(harness.place(.offHead, at: 1000).isEmpty)
        #expect(harness.step(.timerFired, at: 1400).isEmpty)
    }

    @Test("pause-when-removed = false: no pause")
    func pauseOff() {
        var harness = Harness.worn { $0.pauseWhenRemoved = false }
        _ = harness.place(.offHead, at: 1000)
        #expect(harness.step(.timerFired, at: 1400).isEmpty)
    }

    @Test("back on within the window: resume exactly the players Earshot paused, once")
    func resumeWithinWindow() {
        var harness = Harness.pausedAt1400([Self.mpv, Self.vlc])
        #expect(harness.policy.pausedPlayers == [Self.mpv, Self.vlc])
        let cues = harness.place(.onHead, at: 1400 + 15_000)
        #expect(cues == [.resume(.init(players: [Self.mpv, Self.vlc], sink: Self.headphones, accessory: Self.accessory))])
        #expect(harness.policy.pausedPlayers.isEmpty)
        #expect(harness.place(.offHead, at: 20_000).isEmpty)
        #expect(harness.step(.timerFired, at: 20_400).first.map { if case .pause = $0 { true } else { false } } == true)
    }

    @Test("back on after the window: nothing resumed, the players are forgotten")
    func afterWindow() {
        var harness = Harness.pausedAt1400([Self.mpv]) { $0.resumeWindow = 2000 }
        #expect(harness.place(.onHead, at: 3401).isEmpty)
        #expect(harness.policy.pausedPlayers.isEmpty)
    }

    @Test("a decision after the window forgets the paused players even before a return")
    func forgottenByLaterDecision() {
        var harness = Harness.pausedAt1400([Self.mpv]) { $0.resumeWindow = 2000 }
        harness.step(.graphChanged(.client(Client(id: 99))), at: 5000)
        #expect(harness.policy.pausedPlayers.isEmpty)
    }

    @Test("resume-when-worn = false: paused players are not remembered, nothing resumes")
    func resumeOff() {
        var harness = Harness.pausedAt1400([Self.mpv]) { $0.resumeWhenWorn = false }
        #expect(harness.policy.pausedPlayers.isEmpty)
        #expect(harness.place(.onHead, at: 2000).isEmpty)
    }

    @Test("a player the user played (or stopped) after the pause is theirs: not resumed")
    func userTookPlayerBack() {
        var harness = Harness.pausedAt1400([Self.mpv, Self.vlc])
        harness.policy.playerStatusChanged(connection: ":1.7", to: "Paused")  // Earshot's own pause echoing back
        #expect(harness.policy.pausedPlayers == [Self.mpv, Self.vlc])
        harness.policy.playerStatusChanged(connection: ":1.7", to: "Playing")
        #expect(harness.place(.onHead, at: 2000) == [.resume(.init(players: [Self.vlc], sink: Self.headphones, accessory: Self.accessory))])
    }

    /// Seen under load: mpv's own "Playing" from its start reached the daemon after Earshot's
    /// pause, and the player was taken for the user's (never resumed).
    @Test("a status signal sent before the pause took is not the user's")
    func lateSignalBeforeThePause() {
        var mpv = Self.mpv
        mpv.pausedAfterSignal = 41
        var harness = Harness.pausedAt1400([mpv])
        harness.policy.playerStatusChanged(connection: ":1.7", to: "Playing", signal: 40)
        harness.policy.playerStatusChanged(connection: ":1.7", to: "Playing", signal: 41)
        #expect(harness.policy.pausedPlayers == [mpv])
        harness.policy.playerStatusChanged(connection: ":1.7", to: "Playing", signal: 42)
        #expect(harness.policy.pausedPlayers.isEmpty)
    }

    /// A laptop: one sink whose card has speakers and a headphone jack (issue 19).
    static func laptop(headphones: RouteAvailability) -> (Graph, Device) {
        var graph = Graph()
        let routes = DeviceRoutes(all: [
            DeviceRoute(index: 0, direction: .output, name: "speaker", description: "Speakers", priority: 100, available: .unknown, portType: "speaker", devices: [0]),
            DeviceRoute(index: 1, direction: .output, name: "headphones", description: "Headphones", priority: 200, available: headphones, portType: "headphones", devices: [0]),
        ], active: [
            DeviceRoute(index: 1, direction: .output, name: "headphones", description: "Headphones", priority: 200, available: headphones, portType: "headphones", devices: [0], device: 0),
        ])
        let card = Device(id: 50, props: ["device.name": "alsa_card.laptop"], routes: routes)
        graph.apply(.device(card))
        graph.apply(.node(sink(40, speakers, ["device.id": "50", "card.profile.device": "0", "device.bus": "pci"])))
        return (graph, card)
    }

    @Test("a jack: unplugged on the default sink pauses (also streams the session manager just moved off); plugged back resumes")
    func jack() throws {
        let (graph, card) = Self.laptop(headphones: .yes)
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        var policy = PlaybackPolicy()
        var last = engine.handle(.start, at: 0).decision
        var unplugged = card
        unplugged.routes = try #require(card.routes?.setting("headphones", available: .no))
        let out = engine.handle(.graphChanged(.device(unplugged)), at: 5000).decision
        let cues = policy.react(to: out, after: last, config: PlaybackConfig())
        last = out
        #expect(cues == [.pause(PlaybackPolicy.Pause(reason: .portUnplugged, sink: Self.speakers, accessory: .nodeName(Self.speakers), movedOffSince: 3000))])
        policy.record([Self.mpv], for: PlaybackPolicy.Pause(reason: .portUnplugged, sink: Self.speakers, accessory: .nodeName(Self.speakers)), at: 5000, config: PlaybackConfig())
        let back = engine.handle(.graphChanged(.device(card)), at: 6000).decision
        #expect(back.portEvent?.kind == .plugged)
        #expect(policy.react(to: back, after: last, config: PlaybackConfig()) == [
            .resume(PlaybackPolicy.Resume(players: [Self.mpv], sink: Self.speakers, accessory: .nodeName(Self.speakers), reason: .portPlugged)),
        ])
        #expect(policy.pausedPlayers.isEmpty)
    }

    @Test("after a sink-removed pause, the headphones coming back worn resume")
    func sinkReturns() {
        var harness = Harness.worn()
        let cues = harness.step(.graphChanged(.removed(43)), at: 2000)
        guard case .pause(let pause)? = cues.first else { Issue.record("no pause: \(cues)"); return }
        harness.policy.record([Self.mpv], for: pause, at: 2000, config: harness.engine.config.playback)
        let back = Self.sink(45, Self.headphones, ["device.bus": "bluetooth", "device.form-factor": "headphone", "api.bluez5.address": "AA:BB:CC:DD:EE:FF"])
        #expect(harness.step(.graphChanged(.node(back)), at: 3000) == [], "settling (§1): not back yet")
        #expect(harness.step(.timerFired, at: 3200) == [.resume(.init(players: [Self.mpv], sink: Self.headphones, accessory: Self.accessory))])
    }
}

/// Issue 38: a worn headset taken by another host (its primary source switched away) is a
/// becoming-noisy moment, and what Earshot held is given back when the headset returns.
@Suite("Playback policy: another host, held streams", .blockingCalls)
struct PlaybackOtherHostTests {
    typealias P = PlaybackPolicyTests
    static let host = BluetoothAddress("11:22:33:44:55:66")!
    static let phone = BluetoothAddress("22:33:44:55:66:77")!

    /// Worn, its primary source this host (from the config's host-addresses).
    static func worn(_ configure: (inout PlaybackConfig) -> Void = { _ in }) -> P.Harness {
        var harness = P.Harness { configure(&$0) }
        var config = harness.engine.config
        config.hostAddresses = [host]
        _ = harness.engine.handle(.configReplaced(config), at: 0)
        let configuration = AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .onHead, primarySource: host)
        harness.step(.accessory(.register(P.accessory, reporter: "org.earshot.test", configuration)), at: 0)
        return harness
    }

    static func source(_ address: BluetoothAddress) -> PolicyInput {
        .accessory(.update(P.accessory, AccessoryUpdate(primarySource: .set(address))))
    }

    @Test("taken by another host: a pause with reason other-host; back for this host: resumed (accessory-returned)")
    func otherHost() {
        var harness = Self.worn()
        #expect(harness.engine.currentDefault == P.headphones)
        let cues = harness.step(Self.source(Self.phone), at: 1000)
        #expect(harness.engine.currentDefault == P.speakers)
        #expect(harness.last?.reason == .sourceChanged)
        #expect(cues == [.pause(.init(reason: .otherHost, sink: P.headphones, accessory: P.accessory))])
        if case .pause(let pause)? = cues.first { harness.policy.record([P.mpv], for: pause, at: 1000, config: harness.engine.config.playback) }
        #expect(harness.step(Self.source(Self.host), at: 2000) == [.resume(.init(players: [P.mpv], sink: P.headphones, accessory: P.accessory))])
    }

    @Test("pause-when-other-host = false: nothing paused when another host takes it; coming off still pauses")
    func otherHostOff() {
        var harness = Self.worn { $0.pauseWhenOtherHost = false }
        #expect(harness.step(Self.source(Self.phone), at: 1000).isEmpty)
        _ = harness.step(Self.source(Self.host), at: 2000)
        _ = harness.place(.offHead, at: 3000)
        #expect(harness.step(.timerFired, at: 3400) == [.pause(.init(reason: .accessoryRemoved, sink: P.headphones, accessory: P.accessory))])
    }

    @Test("held streams are given back on the headset's return even after the resume window (the silence only kept them from the speakers)")
    func heldGivenBackAfterWindow() {
        var harness = P.Harness.pausedAt1400([]) { $0.resumeWindow = 1000 }
        harness.policy.recordHeld(for: .init(reason: .accessoryRemoved, sink: P.headphones, accessory: P.accessory), at: 1400)
        #expect(harness.place(.onHead, at: 60_000) == [.resume(.init(players: [], sink: "", accessory: P.accessory))])
        #expect(harness.place(.offHead, at: 61_000).isEmpty)
    }
}

/// Which streams a departure holds, and what Earshot keeps of them.
@Suite("Held streams", .blockingCalls)
struct HeldStreamsTests {
    static let sink = PlaybackPolicyTests.headphones
    static let accessory = PlaybackPolicyTests.accessory

    static func stream(_ id: ObjectID, client: ObjectID = 60, state: NodeState = .running, mute: Bool? = false, _ props: Properties = [:]) -> Node {
        var node = Node(
            id: id, state: state,
            props: props.merging(["media.class": "Stream/Output/Audio", "client.id": String(client), "object.serial": String(id + 1000), "application.name": "app\(id)"]) { a, _ in a })
        node.mute = mute
        return node
    }

    static func graph(_ nodes: [Node]) -> Graph {
        var graph = PlaybackPolicyTests.graph
        for node in nodes { graph.apply(.node(node)) }
        return graph
    }

    @Test("held: running, not stopped by a pause, not already muted, not a call's (its role, or a client recording a call)")
    func selection() {
        let running = Self.stream(70)
        let idle = Self.stream(71, state: .idle)
        let paused = Self.stream(72)
        let mutedByUser = Self.stream(73, mute: true)
        let phone = Self.stream(74, ["media.role": "phone"])
        let communication = Self.stream(75, ["media.role": "Communication"])
        let listed = Self.stream(76, ["application.name": "Zoom"])
        let callersPlayback = Self.stream(77, client: 61)
        let callCapture = Node(id: 78, props: ["media.class": "Stream/Input/Audio", "client.id": "61", "media.role": "Communication"])
        let unknownMute = Self.stream(79, mute: nil)
        let streams = [running, idle, paused, mutedByUser, phone, communication, listed, callersPlayback, unknownMute]
        var input = InputConfig()
        input.callApplications = ["Zoom"]
        let graph = Self.graph(streams + [callCapture])
        // Zoom's stream is held: a call application's name alone makes no call (Firefox is one).
        #expect(HoldSelection.streams(streams, stopped: [72], in: graph, input: input).map(\.id) == [70, 76, 79])
    }

    @Test("a stream the user unmutes, ends, or whose id another stream takes is forgotten; a return releases once it plays on the headset again")
    func holdsLifecycle() {
        var holds = StreamHolds()
        for id: ObjectID in [70, 71, 72, 73] {
            holds.add(HeldStream(stream: id, serial: UInt64(id) + 1000, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        }
        var graph = Self.graph([70, 71, 72, 73].map { Self.stream($0, mute: true) })
        for id: ObjectID in [70, 71, 72, 73] { _ = holds.note(.node(Self.stream(id, mute: true)), in: graph) }  // the mutes shown
        var unmuted = Self.stream(71, mute: false)
        graph.apply(.node(unmuted))
        let forgotUnmuted = holds.note(.node(unmuted), in: graph)
        #expect(forgotUnmuted)
        graph.apply(.removed(72))
        let forgotEnded = holds.note(.removed(72), in: graph)
        #expect(forgotEnded)
        unmuted = Self.stream(73, mute: true)
        unmuted.props["object.serial"] = "9999"  // id 73 reused by another stream
        graph.apply(.node(unmuted))
        let forgotReused = holds.note(.node(unmuted), in: graph)
        #expect(forgotReused)
        #expect(holds.all.map(\.stream) == [70])
        let early = holds.due(in: graph)
        #expect(early.isEmpty, "not released yet")
        holds.release(Self.accessory)
        let unlinked = holds.due(in: graph)
        #expect(unlinked.isEmpty, "released, but it plays on no sink yet")
        graph.apply(.link(Link(id: 500, outputNode: 70, outputPort: 1, inputNode: 43, inputPort: 2)))
        let due = holds.due(in: graph)
        #expect(due.map(\.stream) == [70])
        #expect(holds.isEmpty)
    }

    /// Seen live (Chromium leaked 50–70 ms): its "Playing" from before the pause reached the
    /// daemon after it and released the drain at once.
    @Test("a drain is released by its player's Playing only when sent after the pause")
    func lateSignalKeepsTheDrain() {
        var holds = StreamHolds()
        var drain = HeldStream(stream: 70, serial: 1070, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory)
        drain.player = ":1.4"
        drain.pausedAfterSignal = 12
        holds.add(drain)
        let graph = Self.graph([Self.stream(70, mute: true)])
        _ = holds.note(.node(Self.stream(70, mute: true)), in: graph)
        holds.playerPlays(":1.4", signal: 11)
        holds.playerPlays(":1.4", signal: 12)
        let kept = holds.due(in: graph)
        #expect(kept.isEmpty)
        holds.playerPlays(":1.4", signal: 13)
        let released = holds.due(in: graph)
        #expect(released.map(\.stream) == [70])
    }

    /// Seen live: mpv's stream went idle before its mute's echo came; read as the user's unmute,
    /// the drain was dropped and the stream stayed muted for good.
    @Test("a mute not shown yet is not taken for someone's unmute: the stream is given back once it shows")
    func unconfirmedMute() {
        var holds = StreamHolds()
        var drain = HeldStream(stream: 70, serial: 1070, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory)
        drain.player = ":1.7"
        holds.add(drain)
        var graph = Self.graph([Self.stream(70, state: .idle, mute: false)])
        let idleFirst = holds.note(.node(Self.stream(70, state: .idle, mute: false)), in: graph)
        #expect(!idleFirst)
        let early = holds.due(in: graph)
        #expect(early.isEmpty, "not before its mute shows")
        #expect(holds.all.map(\.stream) == [70])
        graph.apply(.node(Self.stream(70, state: .idle, mute: true)))
        _ = holds.note(.node(Self.stream(70, state: .idle, mute: true)), in: graph)
        let due = holds.due(in: graph)
        #expect(due.map(\.stream) == [70])
    }

    @Test("a held stream the user moves (its target.object written) is theirs; Earshot's own pin of a pinned stream is no move")
    func movedByUser() {
        var holds = StreamHolds()
        holds.add(HeldStream(stream: 70, serial: 1070, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        holds.add(HeldStream(stream: 71, serial: 1071, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        let graph = Self.graph([Self.stream(70, mute: true), Self.stream(71, mute: true, ["target.object": "alsa_output.usb"])])
        let pin = holds.note(.metadataProperty(metadata: 30, subject: 71, key: "target.object", type: nil, value: "alsa_output.usb"), in: graph)
        #expect(!pin)
        let cleared = holds.note(.metadataProperty(metadata: 30, subject: 70, key: "target.object", type: nil, value: "-1"), in: graph)
        #expect(!cleared)
        let moved = holds.note(.metadataProperty(metadata: 30, subject: 70, key: "target.object", type: "Spa:Id", value: "alsa_output.hdmi"), in: graph)
        #expect(moved)
        #expect(holds.all.map(\.stream) == [71])
    }

    @Test("at stop or restart every untouched held stream is taken; one already unmuted is not")
    func takeAll() {
        var holds = StreamHolds()
        holds.add(HeldStream(stream: 70, serial: 1070, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        holds.add(HeldStream(stream: 71, serial: 1071, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        let graph = Self.graph([Self.stream(70, mute: true), Self.stream(71, mute: false)])
        _ = holds.note(.node(Self.stream(71, mute: true)), in: graph)  // shown muted, then unmuted by someone
        let taken = holds.takeAll(in: graph)
        #expect(taken.map(\.stream) == [70])
        #expect(holds.isEmpty)
    }

    @Test("bounded: no more than the limit are held")
    func bounded() {
        var holds = StreamHolds()
        for id in 0..<ObjectID(StreamHolds.limit + 10) {
            holds.add(HeldStream(stream: id, serial: nil, application: nil, name: nil, sink: Self.sink, accessory: Self.accessory))
        }
        #expect(holds.all.count == StreamHolds.limit)
    }
}

/// Where each stream last played, kept across the instant its links go.
@Suite("Last played sinks", .blockingCalls)
struct LastPlayedSinksTests {
    static func graph() -> Graph {
        var graph = PlaybackPolicyTests.graph
        graph.apply(.client(Client(id: 60, props: ["application.process.id": "100"])))
        graph.apply(.node(Node(id: 70, props: ["media.class": "Stream/Output/Audio", "client.id": "60", "node.name": "mpv"])))
        return graph
    }

    /// The client pids of the streams that last played on `sink`.
    static func pids(_ sinks: LastPlayedSinks, playingOn sink: String, in graph: Graph, movedOffSince: Milliseconds? = nil) -> Set<Int32> {
        Set(sinks.streams(playingOn: sink, in: graph, movedOffSince: movedOffSince).compactMap { StreamClient(of: $0, in: graph)?.pids.first?.pid })
    }

    static func link(_ id: ObjectID, to sink: ObjectID) -> Link {
        Link(id: id, outputNode: 70, outputPort: 71, inputNode: sink, inputPort: sink + 1)
    }

    @Test("a stream keeps its last sink while unlinked, follows a move, and is dropped when it goes")
    func follows() {
        var graph = Self.graph()
        var sinks = LastPlayedSinks()
        sinks.rebuild(from: graph)
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph).isEmpty)
        for change in [GraphChange.link(Self.link(80, to: 43)), .removed(80), .removed(43)] {
            graph.apply(change)
            sinks.record(change, in: graph)
        }
        // The headphones and their links are gone; the stream played there last.
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph) == [100])
        let move = GraphChange.link(Self.link(81, to: 40))
        graph.apply(move)
        sinks.record(move, in: graph)
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph).isEmpty)
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.speakers, in: graph) == [100])
        graph.apply(.removed(70))
        sinks.record(.removed(70), in: graph)
        #expect(sinks.sinks.isEmpty)
    }

    /// Issue 19: WirePlumber moves streams off an unplugged port itself, sometimes before
    /// Earshot has read the card: a jack's pause also takes the streams that just moved off.
    @Test("streams that moved off a sink since a time count for a jack's pause, older moves not")
    func movedOff() {
        var graph = Self.graph()
        var sinks = LastPlayedSinks()
        for (change, at) in [(GraphChange.link(Self.link(80, to: 43)), Milliseconds(100)), (.removed(80), 900), (.link(Self.link(81, to: 40)), 1000)] {
            graph.apply(change)
            sinks.record(change, in: graph, at: at)
        }
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph).isEmpty)
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph, movedOffSince: 500) == [100])
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph, movedOffSince: 1500).isEmpty)
        graph.apply(.removed(70))
        sinks.record(.removed(70), in: graph, at: 1100)
        #expect(sinks.movedFrom.isEmpty)
    }

    @Test("rebuilding from a graph reads the existing links")
    func rebuild() {
        var graph = Self.graph()
        graph.apply(.link(Self.link(80, to: 43)))
        var sinks = LastPlayedSinks()
        sinks.rebuild(from: graph)
        #expect(Self.pids(sinks, playingOn: PlaybackPolicyTests.headphones, in: graph) == [100])
    }
}
