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
    /// A line for the log (the first sighting of something skipped); never needed for correctness.
    case note(String)
    /// The session gave up on this channel (the headset stayed silent through every request):
    /// close it and connect again, with the owner's backoff. The text says why, for the log.
    case reconnect(String)
}
