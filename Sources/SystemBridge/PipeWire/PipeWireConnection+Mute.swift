import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

extension PipeWireConnection {
    /// Mutes or unmutes a playback stream (`Stream/Output/Audio`) as `pactl
    /// set-sink-input-mute` does through pipewire-pulse: sets the `mute` of its node's `Props`
    /// param through this connection's proxy, and returns once PipeWire has taken the request
    /// (a round trip: closing the connection next cannot lose it).
    ///
    /// The stream applies it on its own side, then its Props come back and only then does the
    /// graph's `Node.mute` change; a stream that ignores the request sends nothing and PipeWire
    /// reports no error. So the graph is the confirmation: wait on it with a deadline, e.g.
    ///
    ///     try await connection.setMute(true, ofNode: id)
    ///     _ = try await connection.waitUntil("stream \(id) muted", timeout: .seconds(2)) { $0.nodes[id]?.mute == true }
    ///
    /// (`waitUntil` checks the graph first, so an echo that came before it is not missed; when
    /// someone else may toggle the mute meanwhile, `arm` the wait before calling this.) A
    /// repeated value changes nothing and brings no change of the graph.
    ///
    /// Throws `.noSuchObject` when `id` is no node of the graph, `.requestFailed` (EINVAL) when
    /// it is not a playback stream: only those have their mute followed.
    public func setMute(_ mute: Bool, ofNode id: ObjectID) async throws(PipeWireError) {
        try loop.withLock { () throws(PipeWireError) in
            try checkUsable()
            guard let object = boundObjects[id], object.kind == .node, let node = graph.nodes[id] else {
                throw PipeWireError.noSuchObject(id)
            }
            guard node.isPlaybackStream else {
                throw PipeWireError.requestFailed(
                    operation: "\(mute ? "mute" : "unmute") node \(id)", code: -EINVAL,
                    message: "node \(id) (\(node.name ?? node.mediaClass ?? "unnamed")) is not a playback stream")
            }
            try check(CPipeWire_node_set_mute(object.handle.proxy, mute), "set Props mute=\(mute) on node \(id)")
        }
        try await sync()
    }
}
