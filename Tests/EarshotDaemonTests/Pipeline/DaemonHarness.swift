import WireFields
import AudioGraph
import Foundation
import Logging
import RoutingPolicy
import Synchronization
import SystemBridge
import Testing

@testable import EarshotDaemon

/// What the daemon did to the outside world, in order: PipeWire commands and player actions
/// share one log, so a test can assert the order of effects across them.
final class EffectLog: Sendable {
    private let entries = Mutex<[String]>([])

    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A `PipeWireCommands` stand-in: records every command, makes links with fresh ids and owns
/// them as `PipeWireConnection` does (gone when destroyed or superseded by a relink).
final class FakePipeWire: PipeWireCommands {
    let log: EffectLog
    private struct State {
        var owned: [ObjectID: [ObjectID: ObjectID]] = [:]
        var nextLink: ObjectID = 1000
        var closed = false
        /// The default-metadata writes PipeWire would echo back, not yet taken by `takeEchoes`.
        var echoes: [GraphChange] = []
        /// Links are requested but none is made (PipeWire 1.4's null sink without a format).
        var linksFail = false
        var createdMetadata = false
        /// Unmutes are asked for but none is done (a client that does not answer, a closing
        /// connection).
        var unmutesFail = false
    }
    private let state = Mutex(State())

    init(log: EffectLog) { self.log = log }

    var remoteName: String { "fake" }

    @discardableResult
    func setDefaultMetadata(subject: ObjectID, key: String, type: String?, value: String?, flush: Bool) async throws(PipeWireError) -> UInt64 {
        let shown = value.flatMap(MetadataEntry.name(inJSON:)) ?? value ?? "nil"
        log.append(subject == 0 ? "set \(key)=\(shown)" : "set \(subject) \(key)=\(shown)")
        state.withLock {
            $0.echoes.append(.metadataProperty(metadata: DaemonHarness.metadataID, subject: subject, key: key, type: type, value: value))
        }
        return MonotonicClock.nanoseconds()
    }

    /// The writes since the last call, as the graph changes PipeWire reports for them.
    func takeEchoes() -> [GraphChange] {
        state.withLock { state in
            defer { state.echoes = [] }
            return state.echoes
        }
    }

    func rereadMetadata(id: ObjectID) async throws(PipeWireError) -> Int {
        log.append("reread metadata \(id)")
        return 0
    }

    func createDefaultMetadata() async throws(PipeWireError) {
        log.append("create default metadata")
        state.withLock { $0.createdMetadata = true }
    }

    /// The id the daemon's created metadata gets, once `createDefaultMetadata` ran.
    static let createdMetadataID: ObjectID = 31

    func createdDefaultMetadataIDs() -> Set<ObjectID> {
        state.withLock { $0.createdMetadata ? [Self.createdMetadataID] : [] }
    }

    func setMute(_ mute: Bool, ofNodes ids: [ObjectID], within timeout: Duration) async -> Set<ObjectID> {
        log.append("\(mute ? "mute" : "unmute") \(ids.map(String.init).joined(separator: ","))")
        return !mute && state.withLock({ $0.unmutesFail }) ? [] : Set(ids)
    }

    func isResponsive(within timeout: Duration) async -> Bool {
        log.append("round trip")
        return true
    }

    func removeCreatedDefaultMetadata() async -> Bool {
        log.append("remove default metadata")
        return state.withLock { state in
            defer { state.createdMetadata = false }
            return state.createdMetadata
        }
    }

    func configureDSPPorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError) {
        log.append("ports \(id) \(channels.joined(separator: ","))")
    }

    func configureCapturePorts(ofNode id: ObjectID, channels: [String]) async throws(PipeWireError) {
        log.append("capture ports \(id) \(channels.joined(separator: ","))")
    }

    func failLinks(_ fail: Bool) { state.withLock { $0.linksFail = fail } }
    func failUnmutes(_ fail: Bool) { state.withLock { $0.unmutesFail = fail } }

    func relink(_ moves: [RelinkMove]) async -> [Result<[ObjectID], PipeWireError>] {
        moves.map { move in
            log.append("link \(move.output)→\(move.input)" + (move.obsolete.isEmpty ? "" : " unlink \(move.obsolete.map(String.init).joined(separator: ","))"))
            return .success(state.withLock { state in
                guard !state.linksFail else { return [] }
                state.nextLink += 1
                state.owned[move.output, default: [:]][state.nextLink] = move.input
                for link in move.obsolete { state.owned[move.output]?[link] = nil }
                return [state.nextLink]
            })
        }
    }

    func destroy(_ ids: [ObjectID]) async throws(PipeWireError) {
        log.append("destroy \(ids.map(String.init).joined(separator: ","))")
        state.withLock { state in
            for id in ids { for stream in state.owned.keys { state.owned[stream]?[id] = nil } }
        }
    }

    func ownedLinks() -> [ObjectID: [ObjectID: ObjectID]] { state.withLock { $0.owned } }

    func close() { state.withLock { $0.closed = true } }
}

/// Time the test moves by hand: sleepers wake when `advance` passes their deadline.
final class TestClock: DaemonClock {
    private struct Sleeper {
        var deadline: Milliseconds
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Milliseconds = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var nextToken: UInt64 = 0
    }
    private let state = Mutex(State())

    var now: Milliseconds { state.withLock { $0.now } }
    var wallClock: Int64 { 1_800_000_000_000 + state.withLock { $0.now } }

    func advance(by delta: Milliseconds) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += delta
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for token in due.keys { state.sleepers[token] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    func sleep(until deadline: Milliseconds) async throws {
        let token = state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers[token] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: token) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}

/// Media players that log what they are asked; a pause can be held open (a slow player)
/// until the test releases it.
final class FakePlayers: MediaPlayerControl {
    let log: EffectLog
    private struct State {
        var holdPauses = false
        var held: [CheckedContinuation<Void, Never>] = []
        var pauseStarted: [CheckedContinuation<Void, Never>] = []
        var pausesStarted = 0
    }
    private let state = Mutex(State())
    static let player = MediaPlayer(busName: "org.mpris.MediaPlayer2.fake", processID: 4242, connection: ":1.42")

    init(log: EffectLog) { self.log = log }

    func holdPauses() { state.withLock { $0.holdPauses = true } }

    func releasePauses() {
        let held = state.withLock { state in
            state.holdPauses = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// Returns once a pause has started (and, if held, is waiting for `releasePauses`).
    func pauseHasStarted() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { state in
                if state.pausesStarted > 0 { continuation.resume() } else { state.pauseStarted.append(continuation) }
            }
        }
    }

    func pause(streams: [StreamClient]) async -> PauseOutcome {
        let mine = streams.filter { $0.pids.contains { $0.pid == Self.player.processID } }
        guard !mine.isEmpty else { return PauseOutcome() }
        log.append("pause begin")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiters = state.withLock { state in
                state.pausesStarted += 1
                if state.holdPauses { state.held.append(continuation) } else { continuation.resume() }
                defer { state.pauseStarted = [] }
                return state.pauseStarted
            }
            for waiter in waiters { waiter.resume() }
        }
        log.append("pause end")
        var player = Self.player
        player.streams = mine.map(\.stream)
        return PauseOutcome(paused: [player], stopped: Set(player.streams))
    }

    func resume(_ players: [MediaPlayer]) async -> [MediaPlayer] {
        log.append("resume \(players.map(\.busName).joined(separator: ","))")
        return players
    }
}

/// A daemon over a fake PipeWire with a test clock, taking inputs on a task of its own.
struct DaemonHarness {
    static let speakers = "alsa_output.pci.analog-stereo"
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
    static let address = "AA:BB:CC:DD:EE:FF"
    static let metadataID: ObjectID = 30
    static let streamID: ObjectID = 60

    let daemon: Daemon
    let clock = TestClock()
    let log = EffectLog()
    let pipewire: FakePipeWire
    let players: FakePlayers
    let directory: URL
    let consumer: Task<Void, Never>

    /// - Parameter config: TOML written as the user's config (XDG_CONFIG_HOME is private).
    /// - Parameter reusing: another harness's directory (its state file: a restart).
    init(config: String = "", reusing: URL? = nil) async throws {
        directory = reusing ?? FileManager.default.temporaryDirectory.appendingPathComponent("earshot-daemon-\(UUID().uuidString)")
        let configHome = directory.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: configHome.appendingPathComponent("earshot"), withIntermediateDirectories: true)
        let configPath = configHome.appendingPathComponent("earshot/earshot.toml").path
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let options = DaemonOptions(
            configPath: configPath, remote: nil, socketPath: directory.appendingPathComponent("control").path,
            statePath: directory.appendingPathComponent("state/state.json").path,
            environment: [
                "XDG_CONFIG_HOME": configHome.path, "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
                "XDG_RUNTIME_DIR": directory.path,
            ],
            verbose: false)
        var logger = Logger(label: "earshot.test")
        logger.logLevel = .critical
        pipewire = FakePipeWire(log: log)
        players = FakePlayers(log: log)
        let daemon = try Daemon(options: options, logger: logger, clock: clock)
        self.daemon = daemon
        await daemon.attachMediaPlayers(players)
        consumer = Task { await daemon.takeInputs() }
    }

    func stop() async {
        await daemon.stop()
        await consumer.value
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Graphs

    static func sink(_ id: ObjectID, _ name: String, _ props: Properties) -> Node {
        Node(id: id, props: props.merging(["node.name": name, "media.class": "Audio/Sink", "object.serial": String(id + 500)]) { a, _ in a })
    }

    /// Speakers (the configured default) and Bluetooth headphones, a playing stream of a
    /// player process linked to `playingOn`, and (cooperative) WirePlumber's client.
    static func graph(sessionManager: Bool, playingOn: String? = nil) -> Graph {
        var graph = Graph()
        if sessionManager {
            graph.apply(.client(Client(id: 20, props: ["application.process.binary": "wireplumber", "object.serial": "520"])))
        }
        graph.apply(.client(Client(id: 21, props: ["application.process.id": String(FakePlayers.player.processID), "object.serial": "521"])))
        graph.apply(.node(sink(40, speakers, ["device.bus": "pci", "device.form-factor": "internal"])))
        graph.apply(.node(sink(43, headphones, ["device.bus": "bluetooth", "device.form-factor": "headphone", "api.bluez5.address": address])))
        for (id, node) in [(41 as ObjectID, 40 as ObjectID), (44, 43)] {
            graph.apply(.port(Port(id: id, direction: .input, props: ["node.id": String(node), "audio.channel": "FL", "object.serial": String(id + 500)])))
        }
        graph.apply(.node(Node(id: streamID, props: [
            "media.class": "Stream/Output/Audio", "node.name": "player", "client.id": "21", "object.serial": "560",
        ])))
        graph.apply(.port(Port(id: 61, direction: .output, props: ["node.id": String(streamID), "audio.channel": "FL", "object.serial": "561"])))
        if let playingOn {
            let sink: ObjectID = playingOn == headphones ? 43 : 40
            graph.apply(.link(Link(id: 70, outputNode: streamID, outputPort: 61, inputNode: sink, inputPort: sink + 1, props: ["object.serial": "570"])))
        }
        graph.apply(.metadata(Metadata(id: metadataID, props: ["metadata.name": "default"])))
        graph.apply(defaultWritten(speakers))
        return graph
    }

    static func defaultWritten(_ name: String) -> GraphChange {
        .metadataProperty(metadata: metadataID, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: name))
    }

    // MARK: Inputs

    func connect(_ graph: Graph) async {
        _ = await daemon.submit(.connected(pipewire, graph))
    }

    /// Reports Earshot's own writes back, as PipeWire does.
    func echo() async {
        _ = await daemon.submit(.graphChanged(pipewire.takeEchoes()))
    }

    /// Returns once every input submitted before (the timer's too) has been handled: inputs
    /// are taken in order, and this one changes nothing.
    func settle() async {
        _ = await daemon.submit(.graphChanged([]))
    }

    func changes(_ changes: GraphChange...) async {
        _ = await daemon.submit(.graphChanged(changes))
    }

    @discardableResult
    func place(_ placement: String, register: Bool = false) async -> Result<AccessoryConfiguration?, AccessoryError> {
        let identity = AccessoryIdentity(parsing: Self.address)!
        let request: AccessoryRequest
        if register {
            var configuration = AccessoryConfiguration(capabilities: [.audioSwitching, .placement])
            configuration.placement = Placement(rawValue: placement)
            request = .register(identity, reporter: "org.earshot.test", configuration)
        } else {
            request = .update(identity, AccessoryUpdate(placement: .set(Placement(rawValue: placement)!)))
        }
        return await daemon.perform(request)
    }

    var decision: Decision? {
        get async { await daemon.latestDecision }
    }
}
