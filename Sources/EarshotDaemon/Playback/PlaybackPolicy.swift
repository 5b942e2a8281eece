import WireFields
import ControlProtocol
import RoutingPolicy

/// When to pause and resume media players (docs/policy.md §7: a player pauses when headphones go
/// away; only the players Earshot paused resume when they come back). Pure: it reads routing
/// decisions and remembers which players it paused; `MediaPlayerControl` does the pausing.
public struct PlaybackPolicy: Sendable {
    /// The worn accessory that held the default went away: pause what plays on `sink`.
    public struct Pause: Sendable, Hashable {
        public var reason: ControlWire.PlaybackEvent.Reason
        public var sink: String
        public var accessory: AccessoryIdentity
        /// Also pause streams that moved off `sink` at or after this time (a jack: the session
        /// manager may have moved them before Earshot read the card).
        public var movedOffSince: Milliseconds?

        public init(reason: ControlWire.PlaybackEvent.Reason, sink: String, accessory: AccessoryIdentity, movedOffSince: Milliseconds? = nil) {
            self.reason = reason
            self.sink = sink
            self.accessory = accessory
            self.movedOffSince = movedOffSince
        }
    }

    /// The accessory is worn again within the window: resume what Earshot paused for it.
    public struct Resume: Sendable, Hashable {
        public var players: [MediaPlayer]
        public var sink: String
        public var accessory: AccessoryIdentity
        public var reason: ControlWire.PlaybackEvent.Reason

        public init(players: [MediaPlayer], sink: String, accessory: AccessoryIdentity, reason: ControlWire.PlaybackEvent.Reason = .accessoryReturned) {
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

    /// How long before a jack's decision the session manager may already have moved the
    /// streams off the unplugged port (it reads the card's routes as Earshot does, a round
    /// trip or two apart; WirePlumber moves streams off an unavailable port itself).
    static let sessionManagerReaction: Milliseconds = 2_000

    /// The players Earshot paused and may resume, by the accessory that went away.
    private(set) var paused: [AccessoryIdentity: PausedGroup] = [:]

    public init() {}

    /// What `decision` asks of the players, given the decision before it (whose ranking says
    /// which worn accessory held the default). Resumes consume what was paused.
    public mutating func react(to decision: Decision, after previous: Decision?, config: PlaybackConfig) -> [Cue] {
        paused = paused.filter { decision.at - $0.value.at <= config.resumeWindow }
        var cues: [Cue] = []
        if config.pauseWhenRemoved, let pause = Self.pause(for: decision, after: previous) { cues.append(.pause(pause)) }
        // A jack: the sink itself stands for what was unplugged (docs/policy.md §7).
        if let event = decision.portEvent, event.kind == .plugged, let group = paused[.nodeName(event.sink)] {
            paused[.nodeName(event.sink)] = nil
            if config.resumeWhenWorn {
                cues.append(.resume(Resume(players: group.players, sink: group.sink, accessory: .nodeName(event.sink), reason: .portPlugged)))
            }
        }
        for accessory in paused.keys.sorted() where decision.ranksWorn(accessory) {
            guard let group = paused.removeValue(forKey: accessory), config.resumeWhenWorn else { continue }
            cues.append(.resume(Resume(players: group.players, sink: group.sink, accessory: accessory)))
        }
        return cues
    }

    /// The default moved off a sink that a worn accessory held, because that accessory is now
    /// off the head (after its grace: the decision is the transition) or its sink is gone.
    /// Any other move (a user pick, another accessory put on) leaves the players alone.
    static func pause(for decision: Decision, after previous: Decision?) -> Pause? {
        // The default sink's port unplugged (the jack emptied, the monitor off): what played
        // there pauses, whether the default moved or the card switched to its speakers.
        if let event = decision.portEvent, event.kind == .unplugged {
            return Pause(reason: .portUnplugged, sink: event.sink, accessory: .nodeName(event.sink), movedOffSince: decision.at - Self.sessionManagerReaction)
        }
        guard decision.changed, let sink = decision.previous, let accessory = previous?.wornAccessory(of: sink) else { return nil }
        if decision.rejectsOffHead(sink) { return Pause(reason: .accessoryRemoved, sink: sink, accessory: accessory) }
        if decision.lacks(sink) { return Pause(reason: .sinkRemoved, sink: sink, accessory: accessory) }
        return nil
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

    /// Every player Earshot would resume now, for tests and status.
    public var pausedPlayers: [MediaPlayer] { paused.keys.sorted().flatMap { paused[$0]?.players ?? [] } }
}
