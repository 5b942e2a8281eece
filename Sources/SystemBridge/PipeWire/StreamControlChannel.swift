import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

/// A PipeWire connection of its own, on the owning connection's context and loop, that sets
/// params on playback streams (`setMute`) and does nothing else: one per streams' client.
///
/// Why: a stream's node is implemented by its client (pw-cat, a browser, pipewire-pulse for a
/// PulseAudio app). PipeWire forwards a `set_param` on such a node to that client and holds the
/// *asking* client busy — reads none of its messages — until the stream's client answers a sync
/// (`node_set_param` in src/pipewire/impl-node.c, the same in 0.3.65 and 1.4.2). A player that
/// is stopped (SIGSTOP) or hung would stall every later request of the connection that asked:
/// on the main connection every round trip, metadata write and link, until its round trip timed
/// out and the whole connection was given up (measured: `setMute` on a stopped pw-cat there,
/// 10 s, then "PipeWire stopped answering"). Here a silent client holds only its own channel;
/// a channel whose round trip passes its deadline is closed (PipeWire forgets what it waited
/// for) and the next request opens a new one. The done of a round trip here also says that
/// the stream's client has taken every set sent before it.
///
/// Every member is used on the loop thread or with the loop lock held.
final class StreamControlChannel {
    /// Whose streams this channel sets: the streams' `client.id`; nil for those of clients
    /// past the channel limit (`PipeWireConnection.controlChannelLimit`), which share one.
    let owner: ObjectID?
    private var core: OpaquePointer?
    private var registry: OpaquePointer?
    private let coreHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    /// Round trips in flight, by sequence number.
    private var syncs: [Int32: LoopPromise<Void>] = [:]
    /// The nodes bound here (no listener: only requests go out on them).
    private var nodes: [ObjectID: ProxyHandle] = [:]

    /// Connects; nil when the daemon refuses.
    init?(owner: ObjectID?, context: OpaquePointer, remoteName: String) {
        self.owner = owner
        coreHook.initialize(to: spa_hook())
        var settings = ["application.name": "earshot [control]"]
        if remoteName.hasPrefix("/") || getenv("PIPEWIRE_REMOTE") == nil { settings["remote.name"] = remoteName }
        guard let props = try? LibPipeWire.newProperties(settings), let core = pw_context_connect(context, props, 0) else {
            coreHook.deallocate()
            return nil
        }
        self.core = core
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard CPipeWire_core_add_listener(core, coreHook, CallbackTables.controlCore, me) >= 0,
            let registry = CPipeWire_core_get_registry(core)
        else {
            close(failing: .closed)
            return nil
        }
        self.registry = registry
    }

    deinit {
        close(failing: .closed)
        coreHook.deallocate()
    }

    /// Node `id`'s proxy on this channel (bound on first use), or nil when it cannot be bound.
    func proxy(ofNode id: ObjectID, version: UInt32) -> OpaquePointer? {
        if let handle = nodes[id] { return handle.proxy }
        guard let registry, let proxy = CPipeWire_registry_bind(registry, id, CPipeWire_type_node(), version) else { return nil }
        let handle = ProxyHandle(proxy: OpaquePointer(proxy))
        nodes[id] = handle
        return handle.proxy
    }

    /// Forgets node `id` (gone from the graph).
    func unbind(_ id: ObjectID) {
        nodes.removeValue(forKey: id)?.release()
    }

    /// A round trip: fulfilled when everything sent here before it has been taken.
    func sync() throws(PipeWireError) -> LoopPromise<Void> {
        guard let core else { throw PipeWireError.closed }
        let seq = try check(CPipeWire_core_sync(core, UInt32(PW_ID_CORE), 0), "pw_core_sync on a control channel")
        let promise = LoopPromise<Void>()
        syncs[seq] = promise
        return promise
    }

    func done(id: UInt32, seq: Int32) {
        guard id == PW_ID_CORE else { return }
        syncs.removeValue(forKey: seq)?.fulfill(())
    }

    /// Fails the round trips in flight (the owning connection failed).
    func fail(_ error: PipeWireError) {
        for promise in syncs.values { promise.fail(error) }
        syncs.removeAll()
    }

    /// Disconnects (PipeWire forgets whatever this client still waited for) and fails the round
    /// trips in flight. Safe twice.
    func close(failing error: PipeWireError) {
        fail(error)
        // The proxies first: disconnecting the core frees them.
        for handle in nodes.values { handle.release() }
        nodes.removeAll()
        if let registry {
            pw_proxy_destroy(registry)
            self.registry = nil
        }
        if let core {
            CPipeWire_hook_remove(coreHook)
            pw_core_disconnect(core)
            self.core = nil
        }
    }
}
