import WireFields
import AudioGraph

/// Why Earshot paused, held, resumed or released what played (docs/policy.md §7). The wire
/// spells these (the `playback` event's `reason`).
public enum PlaybackReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The worn accessory came off (after its grace).
    case accessoryRemoved = "accessory-removed"
    /// Its sink disappeared.
    case sinkRemoved = "sink-removed"
    /// It now plays for another host (its primary source switched away: a phone took it).
    case otherHost = "other-host"
    /// It is worn (and plays for this host) again within the resume window.
    case accessoryReturned = "accessory-returned"
    /// The default sink's port was unplugged (a jack emptied).
    case portUnplugged = "port-unplugged"
    /// It was plugged back within the window.
    case portPlugged = "port-plugged"
    /// The daemon stopped: what it held is given back (nothing stays muted behind it).
    case stopped
    /// Held by a daemon that ended without giving it back (a crash): given back at start.
    case restarted
}

/// A becoming-noisy moment: what played on `sink` must stop before the output moves.
public struct PlaybackDeparture: Sendable, Hashable {
    public var reason: PlaybackReason
    public var sink: String
    public var accessory: AccessoryIdentity
    /// Also streams that moved off `sink` at or after this time (a jack: the session manager
    /// may have moved them before Earshot read the card).
    public var movedOffSince: Milliseconds?

    public init(reason: PlaybackReason, sink: String, accessory: AccessoryIdentity, movedOffSince: Milliseconds? = nil) {
        self.reason = reason
        self.sink = sink
        self.accessory = accessory
        self.movedOffSince = movedOffSince
    }

    /// How long before a jack's decision the session manager may already have moved the
    /// streams off the unplugged port (it reads the card's routes as Earshot does, a round
    /// trip or two apart; WirePlumber moves streams off an unavailable port itself).
    public static let sessionManagerReaction: Milliseconds = 2_000

    /// The departure `decision` makes, given the decision before it (whose ranking says which
    /// worn accessory held the default), or nil. The default moved off a sink that a worn
    /// accessory held because that accessory is now off the head (after its grace), plays for
    /// another host, or its sink is gone; or the default sink's port was unplugged. Any other
    /// move (a user pick, another accessory put on) leaves what plays alone.
    public static func of(_ decision: Decision, after previous: Decision?, config: PlaybackConfig) -> PlaybackDeparture? {
        if let event = decision.portEvent, event.kind == .unplugged {
            guard config.pauseWhenRemoved else { return nil }
            return PlaybackDeparture(
                reason: .portUnplugged, sink: event.sink, accessory: .nodeName(event.sink), movedOffSince: decision.at - sessionManagerReaction)
        }
        guard decision.changed, let sink = decision.previous, let accessory = previous?.wornAccessory(of: sink) else { return nil }
        if decision.rejectsOffHead(sink) { return config.pauseWhenRemoved ? PlaybackDeparture(reason: .accessoryRemoved, sink: sink, accessory: accessory) : nil }
        if decision.rejectsForOtherHost(sink) { return config.pauseWhenOtherHost ? PlaybackDeparture(reason: .otherHost, sink: sink, accessory: accessory) : nil }
        if decision.lacks(sink) { return config.pauseWhenRemoved ? PlaybackDeparture(reason: .sinkRemoved, sink: sink, accessory: accessory) : nil }
        return nil
    }
}
