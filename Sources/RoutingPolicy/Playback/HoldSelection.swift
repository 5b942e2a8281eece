import AudioGraph

/// Which playback streams of a departure are held silent (docs/policy.md §7): those still
/// playing (`running`) that no pause stopped, that are not already muted (someone else's
/// silence is not Earshot's to give back), and that are not part of a call (a call moved to the
/// speakers stays audible).
public enum HoldSelection {
    /// The most streams one departure holds: a client opening thousands costs a bounded number
    /// of mutes.
    public static let limit = 512

    public static func streams(_ streams: [Node], stopped: Set<ObjectID>, in graph: Graph, input: InputConfig) -> [Node] {
        let callClients = Set(graph.captureStreams.compactMap { CallRouting.callReason(of: $0, config: input) != nil ? $0.clientID : nil })
        let held = streams.filter { stream in
            stream.isPlaybackStream && stream.state == .running && stream.mute != true && !stopped.contains(stream.id)
                && !isCall(stream, callClients: callClients, input: input)
        }
        return Array(held.prefix(limit))
    }

    /// A playback stream of a call: `media.role` Communication (PulseAudio's `phone`), or of a
    /// client that records a call now. Not by `call-applications` alone: that list names
    /// browsers (Firefox), which play music far more often than they call.
    static func isCall(_ stream: Node, callClients: Set<ObjectID>, input: InputConfig) -> Bool {
        if stream.props["media.role"] == "Communication" || stream.props["media.role"] == "phone" { return true }
        return stream.clientID.map(callClients.contains) ?? false
    }
}
