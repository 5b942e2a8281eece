import WireFields
import ControlProtocol
import RoutingPolicy

/// When to pause and resume media players, and when to give back the streams Earshot held
/// silent (docs/policy.md §7: what played on a headset stops when it leaves; only what Earshot
/// stopped goes on when it comes back). Pure: it reads routing decisions and remembers which
/// players it paused; `MediaPlayerControl` pauses, `PlaybackHook` mutes.
public struct PlaybackPolicy: Sendable {
    /// The worn accessory that held the default went away: stop what plays on its sink.
    public typealias Pause = PlaybackDeparture

    /// The accessory is back: resume what Earshot paused for it (within the window), and give
    /// back what it held.
    public struct Resume: Sendable, Hashable {
        public var players: [MediaPlayer]
        public var sink: String
        public var accessory: AccessoryIdentity
        public var reason: PlaybackReason

        public init(players: [MediaPlayer], sink: String, accessory: AccessoryIdentity, reason: PlaybackReason = .accessoryReturned) {
            self.players = players
            self.sink = sink
            self.accessory = accessory
            self.reason = reason
        }
    }

    public enum Cue: Sendable, Hashable {
        case pause(Pause)
        case resume(Resume)
    }

    struct PausedGroup: Sendable, Hashable {
        var sink: String
        var players: [MediaPlayer]
        /// Policy time of the removal; the resume window counts from here.
        var at: Milliseconds
    }

    /// The players Earshot paused and may resume, by the accessory that went away.
    private(set) var paused: [AccessoryIdentity: PausedGroup] = [:]
    /// The accessories whose departure Earshot held streams for: a return gives them back, at
    /// any time (the silence only kept them from playing out loud; back on the headset there is
    /// nothing to keep from anyone).
    private(set) var holding: [AccessoryIdentity: Milliseconds] = [:]

    public init() {}

    /// What `decision` asks of the players, given the decision before it (whose ranking says
    /// which worn accessory held the default). Resumes consume what was paused.
    public mutating func react(to decision: Decision, after previous: Decision?, config: PlaybackConfig) -> [Cue] {
        paused = paused.filter { decision.at - $0.value.at <= config.resumeWindow }
        var cues: [Cue] = []
        if let pause = PlaybackDeparture.of(decision, after: previous, config: config) { cues.append(.pause(pause)) }
        // A jack: the sink itself stands for what was unplugged (docs/policy.md §7).
        if let event = decision.portEvent, event.kind == .plugged, let resume = take(.nodeName(event.sink), reason: .portPlugged, config: config) {
            cues.append(.resume(resume))
        }
        for accessory in Set(paused.keys).union(holding.keys).sorted() where decision.ranksWorn(accessory) {
            if let resume = take(accessory, reason: .accessoryReturned, config: config) { cues.append(.resume(resume)) }
        }
        return cues
    }

    /// The resume for `accessory`'s return: its paused players (when resuming is on) and its
    /// held streams (given back either way). Nil when there is nothing of it.
    private mutating func take(_ accessory: AccessoryIdentity, reason: PlaybackReason, config: PlaybackConfig) -> Resume? {
        let group = paused.removeValue(forKey: accessory)
        let held = holding.removeValue(forKey: accessory)
        guard group != nil || held != nil else { return nil }
        let players = config.resumeWhenWorn ? group?.players ?? [] : []
        let sink = group?.sink ?? (reason == .portPlugged ? accessory.description : "")
        return Resume(players: players, sink: sink, accessory: accessory, reason: reason)
    }

    /// Earshot paused `players` for `pause` at `at` (the decision's time): remembered for a
    /// resume, unless resuming is off.
    public mutating func record(_ players: [MediaPlayer], for pause: Pause, at: Milliseconds, config: PlaybackConfig) {
        guard config.resumeWhenWorn, !players.isEmpty else { return }
        var group = paused[pause.accessory] ?? PausedGroup(sink: pause.sink, players: [], at: at)
        group.players += players.filter { !group.players.contains($0) }
        group.at = at
        paused[pause.accessory] = group
    }

    /// Earshot held streams for `pause` at `at`: the accessory's return gives them back.
    public mutating func recordHeld(for pause: Pause, at: Milliseconds) {
        holding[pause.accessory] = at
    }

    /// A player's PlaybackStatus changed. Anything but Paused means the user took it back
    /// (played or stopped it): Earshot must not resume it later. A signal the player sent
    /// before Earshot's pause took (`signal` not above the player's `pausedAfterSignal`: a late
    /// "Playing" from its start) says nothing about the user.
    public mutating func playerStatusChanged(connection: String, to status: String, signal: UInt64 = .max) {
        guard status != "Paused" else { return }
        for accessory in paused.keys {
            paused[accessory]?.players.removeAll { $0.connection == connection && signal > $0.pausedAfterSignal }
            if paused[accessory]?.players.isEmpty == true { paused[accessory] = nil }
        }
    }

    /// The paused players by accessory, in order (status).
    var pausedGroups: [(AccessoryIdentity, PausedGroup)] { paused.keys.sorted().compactMap { key in paused[key].map { (key, $0) } } }

    /// Every player Earshot would resume now, for tests and status.
    public var pausedPlayers: [MediaPlayer] { paused.keys.sorted().flatMap { paused[$0]?.players ?? [] } }
}
