import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

/// A PipeWire connection of its own, on the owning connection's context and loop, that reads
/// devices' params (`DeviceRouteReader`) and nothing else.
///
/// Why: enumerating the params of a device another client exports (WirePlumber's ALSA and
/// BlueZ cards) is forwarded to that client, and PipeWire holds the *asking* client busy —
/// it reads none of its messages — until the exporter answers (`device_enum_params` in
/// src/pipewire/impl-device.c calls `pw_impl_client_set_busy(client, true)` for an async
/// result, cleared when the exporter's sync comes back). An exporter that never answers
/// (stopped, hung) would stall every later request of the connection that asked: on the main
/// connection, every round trip, metadata write and link. So the asking is done here, one
/// channel per exporting client: a silent exporter holds only its own devices' channel.
///
/// Every member is used on the loop thread or with the loop lock held.
final class DeviceParamsChannel {
    /// Whose devices this channel reads: the exporting client's id (`client.id` of the
    /// device), nil for the devices of clients past the channel limit, which share one.
    let exporter: ObjectID?
    private(set) var core: OpaquePointer?
    private var registry: OpaquePointer?
    private let coreHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    unowned let connection: PipeWireConnection
    /// Route readings in flight here, by the sequence number of the round trip that ends each.
    var readings: [Int32: RouteReading] = [:]
    /// The devices read here: their params proxies, on this channel's core.
    private(set) var devices: [ObjectID: ProxyHandle] = [:]

    /// Connects; nil when the daemon refuses (the caller reads nothing then).
    init?(exporter: ObjectID?, context: OpaquePointer, remoteName: String, connection: PipeWireConnection) {
        self.exporter = exporter
        self.connection = connection
        coreHook.initialize(to: spa_hook())
        var settings = ["application.name": "earshot [params]"]
        if remoteName.hasPrefix("/") || getenv("PIPEWIRE_REMOTE") == nil { settings["remote.name"] = remoteName }
        guard let props = try? LibPipeWire.newProperties(settings), let core = pw_context_connect(context, props, 0) else {
            coreHook.deallocate()
            return nil
        }
        self.core = core
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard CPipeWire_core_add_listener(core, coreHook, CallbackTables.paramsCore, me) >= 0,
            let registry = CPipeWire_core_get_registry(core)
        else {
            close()
            return nil
        }
        self.registry = registry
    }

    deinit {
        close()
        coreHook.deallocate()
    }

    /// The proxy of `object` on this channel (bound on first use), listened to for its params only.
    func proxy(of object: BoundObject) -> OpaquePointer? {
        if let handle = devices[object.id] { return handle.proxy }
        guard let registry,
            let proxy = CPipeWire_registry_bind(registry, object.id, CPipeWire_type_device(), object.version)
        else { return nil }
        let handle = ProxyHandle(proxy: OpaquePointer(proxy))
        let data = Unmanaged.passUnretained(object).toOpaque()
        guard CPipeWire_device_add_listener(OpaquePointer(proxy), handle.hook, CallbackTables.paramsDevice, data) >= 0 else {
            handle.release()
            return nil
        }
        devices[object.id] = handle
        return handle.proxy
    }

    /// Forgets device `id` (removed from the graph): its proxy here goes.
    func unbind(_ id: ObjectID) {
        devices.removeValue(forKey: id)?.release()
        for (seq, reading) in readings where reading.device == id { readings[seq] = nil }
    }

    /// A round trip on this channel: its `done` comes after every param asked for before it.
    func sync() -> Int32 {
        guard let core else { return -1 }
        return CPipeWire_core_sync(core, UInt32(PW_ID_CORE), 0)
    }

    /// Disconnects (PipeWire forgets whatever this client still waited for). Safe twice.
    func close() {
        readings.removeAll()
        // The proxies first: disconnecting the core frees them.
        for handle in devices.values { handle.release() }
        devices.removeAll()
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
