/// One MPRIS player as Earshot paused it.
public struct MediaPlayer: Sendable, Hashable {
    /// Its well-known bus name (`org.mpris.MediaPlayer2.mpv.instance1234`).
    public var busName: String
    /// The process that owned the name when Earshot paused it: a player that quit and came
    /// back under the same name is another player, and is not resumed.
    public var processID: Int32
    /// Its unique connection name (`:1.42`), the sender of its property changes; nil if the
    /// bus did not say.
    public var connection: String?
    /// The number of the last status signal received from the bus when Earshot's Pause was
    /// answered: a status signal numbered at or below it was sent before the pause took
    /// (a late "Playing" of the player's start), not by the user afterwards.
    public var pausedAfterSignal: UInt64

    public init(busName: String, processID: Int32, connection: String?, pausedAfterSignal: UInt64 = 0) {
        self.busName = busName
        self.processID = processID
        self.connection = connection
        self.pausedAfterSignal = pausedAfterSignal
    }
}

/// The media players Earshot can pause and resume: MPRIS on the session bus (`MPRISPlayers`),
/// or a stand-in. Does what it is told; deciding is `PlaybackPolicy`'s.
public protocol MediaPlayerControl: Sendable {
    /// Pauses every player run by one of `processIDs` whose status is Playing; returns those
    /// it paused.
    func pausePlaying(processIDs: Set<Int32>) async -> [MediaPlayer]
    /// Plays each of `players` that is still the same process and still Paused; returns those
    /// it resumed.
    func resume(_ players: [MediaPlayer]) async -> [MediaPlayer]
}
