import AudioGraph
import RoutingPolicy

/// One MPRIS player as Earshot paused it.
public struct MediaPlayer: Sendable, Hashable {
    /// Its well-known bus name (`org.mpris.MediaPlayer2.mpv.instance1234`).
    public var busName: String
    /// The process that owned the name when Earshot paused it: a player that quit and came
    /// back under the same name is another player, and is not resumed.
    public var processID: Int32
    /// That process's start time (`/proc/PID/stat`), when it could be read: the same pid with
    /// another start time is another program that got the pid.
    public var startTime: UInt64?
    /// Its unique connection name (`:1.42`), the sender of its property changes; nil if the
    /// bus did not say.
    public var connection: String?
    /// The number of the last status signal received from the bus when Earshot's Pause was
    /// answered: a status signal numbered at or below it was sent before the pause took
    /// (a late "Playing" of the player's start), not by the user afterwards.
    public var pausedAfterSignal: UInt64
    /// How it was found to play the streams (the closest kind when several streams matched).
    public var match: PlayerMatchKind
    /// The streams found to be its (node ids).
    public var streams: [ObjectID]

    public init(
        busName: String, processID: Int32, connection: String?, pausedAfterSignal: UInt64 = 0, startTime: UInt64? = nil,
        match: PlayerMatchKind = .pid, streams: [ObjectID] = []
    ) {
        self.busName = busName
        self.processID = processID
        self.connection = connection
        self.pausedAfterSignal = pausedAfterSignal
        self.startTime = startTime
        self.match = match
        self.streams = streams
    }
}

/// What a pause did: the players Earshot paused, and which of the streams stopped with them.
public struct PauseOutcome: Sendable, Hashable {
    /// Every player Earshot sent Pause to and that accepted it.
    public var paused: [MediaPlayer]
    /// The streams whose player reported `Paused` within the bound: stopped, nothing to hold.
    public var stopped: Set<ObjectID>
    /// Players that accepted Pause but did not report `Paused` in time (their streams are held).
    public var unconfirmed: [String]

    public init(paused: [MediaPlayer] = [], stopped: Set<ObjectID> = [], unconfirmed: [String] = []) {
        self.paused = paused
        self.stopped = stopped
        self.unconfirmed = unconfirmed
    }
}

/// The media players Earshot can pause and resume: MPRIS on the session bus (`MPRISPlayers`),
/// or a stand-in. Does what it is told; deciding is `PlaybackPolicy`'s.
public protocol MediaPlayerControl: Sendable {
    /// Pauses every Playing player that plays one of `streams` (its process, an ancestor of
    /// it, or the same Flatpak instance: `PlayerMatcher`), and waits, within a bound, for each
    /// to report `Paused`.
    func pause(streams: [StreamClient]) async -> PauseOutcome
    /// Plays each of `players` that is still the same process and still Paused; returns those
    /// it resumed.
    func resume(_ players: [MediaPlayer]) async -> [MediaPlayer]
}
