import RoutingPolicy

/// One thing a session asks its owner to do or tells it, in order.
public enum DriverOutput: Sendable, Hashable {
    /// Bytes to write to the transport, as one packet (AAP) or as stream bytes (Galaxy Buds).
    case send([UInt8])
    /// The wear placement: at the first wear report, then only when it changes.
    case placement(Placement)
    /// Battery levels, when they differ from the last report.
    case battery(BatteryReport)
    /// The host the headset takes its audio from, when it differs from the last report.
    case audioSource(AudioSource)
    /// Whether this headset can say it is worn, once the session found out (Sony: from its
    /// support functions and answers); a set that cannot is still read for its battery.
    case wearSupport(WearSupport)
    /// A line for the log (the first sighting of something skipped); never needed for correctness.
    case note(String)
    /// The session gave up on this channel (the headset stayed silent through every request):
    /// close it and connect again, with the owner's backoff. The text says why, for the log.
    case reconnect(String)
}

/// Whether a connected headset reports wear, and how (for `status` and `accessory show`).
public enum WearSupport: Sendable, Hashable {
    /// It does: `how` names the message (e.g. "table-2 wearing status").
    case reported(how: String)
    /// It does not (or never answered the wear request): `why`, in plain words.
    case notReported(why: String)
}

extension DriverOutput {
    /// Whether it says something of the headset itself (wear, battery, host), not of the channel.
    public var isState: Bool {
        switch self {
        case .placement, .battery, .audioSource: true
        case .send, .wearSupport, .note, .reconnect: false
        }
    }
}
