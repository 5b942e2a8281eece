import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

extension PipeWireConnection {
    /// Mutes or unmutes a playback stream (`Stream/Output/Audio`) as `pactl
    /// set-sink-input-mute` does through pipewire-pulse: sets the `mute` of its node's `Props`
    /// param, and returns once the stream's client has taken the request (a round trip).
    ///
    /// The request goes on a connection kept for that client's streams (`StreamControlChannel`:
    /// PipeWire holds the asking connection until the stream's client answers), never on this
    /// one, so a stopped or hung player stalls nothing else. A client that does not take it
    /// within `timeout` fails the call with `.timedOut`; PipeWire still hands it the request
    /// should it wake, so the mute may yet be applied: the graph will say.
    ///
    /// The stream applies the mute, then its Props come back and only then does the graph's
    /// `Node.mute` change (a repeated value changes nothing). A client may also ignore it, and
    /// PipeWire reports no error then: the graph is the confirmation. Wait on it with a
    /// deadline, e.g.
    ///
    ///     try await connection.setMute(true, ofNode: id)
    ///     _ = try await connection.waitUntil("stream \(id) muted", timeout: .seconds(2)) { $0.nodes[id]?.mute == true }
    ///
    /// (`waitUntil` looks at the graph first, so an echo that came before it is not missed;
    /// when someone else may change the mute meanwhile, `arm` the wait before calling this.)
    ///
    /// Throws `.noSuchObject` when `id` is no node of the graph, `.requestFailed` (EINVAL) when
    /// it is not a playback stream (only those have their mute followed), `.cannotConnect`
    /// when PipeWire refuses the channel.
    public func setMute(_ mute: Bool, ofNode id: ObjectID, timeout: Duration = .seconds(3)) async throws(PipeWireError) {
        let (channel, taken) = try loop.withLock { () throws(PipeWireError) -> (StreamControlChannel, LoopPromise<Void>) in
            try checkUsable()
            guard let object = boundObjects[id], object.kind == .node, let node = graph.nodes[id] else {
                throw PipeWireError.noSuchObject(id)
            }
            guard node.isPlaybackStream else {
                throw PipeWireError.requestFailed(
                    operation: "\(mute ? "mute" : "unmute") node \(id)", code: -EINVAL,
                    message: "node \(id) (\(node.name ?? node.mediaClass ?? "unnamed")) is not a playback stream")
            }
            let channel = try controlChannel(for: node)
            guard let proxy = channel.proxy(ofNode: id, version: object.version) else {
                throw PipeWireError.requestFailed(operation: "bind node \(id) on a control channel", code: -errno, message: "pw_registry_bind failed")
            }
            try check(CPipeWire_node_set_mute(proxy, mute), "set Props mute=\(mute) on node \(id)")
            return (channel, try channel.sync())
        }
        do {
            try await taken.value(on: loop, timeout: timeout, what: "the client of stream \(id) to take its mute")
        } catch {
            // A client that does not answer holds its channel: a new one serves the next request.
            if case .timedOut = error {
                loop.withLock {
                    if controlChannels[channel.owner] === channel {
                        controlChannels[channel.owner] = nil
                        channel.close(failing: error)
                    }
                }
            }
            throw error
        }
    }

    /// The control channel for `node`'s client, opened on first use (loop lock held).
    private func controlChannel(for node: Node) throws(PipeWireError) -> StreamControlChannel {
        loop.assertLockHeld()
        var key = node.clientID
        if controlChannels[key] == nil, controlChannels.keys.filter({ $0 != nil }).count >= Self.controlChannelLimit { key = nil }
        if let channel = controlChannels[key] { return channel }
        guard let context, let channel = StreamControlChannel(owner: key, context: context, remoteName: remoteName) else {
            throw PipeWireError.cannotConnect(remote: remoteName, errno: errno)
        }
        controlChannels[key] = channel
        return channel
    }
}
