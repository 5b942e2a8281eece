import AudioGraph
import CPipeWire
#if canImport(Glibc)
import Glibc
#endif
import CPipeWireShims

/// One connection to a PipeWire daemon that mirrors its graph and carries commands to it.
///
/// libpipewire runs on the connection's own thread (a `pw_thread_loop`); every C callback
/// runs there with the loop lock held, and every command takes that lock, so the mutable
/// state below is only touched under it. Changes flow out on `events`, in order, in batches.
/// When the daemon goes away the connection reports `.disconnected` and fails every waiter;
/// connect again with a new connection. `close()` (or deinit) frees everything.
public final class PipeWireConnection: @unchecked Sendable {
    public let events: PipeWireEvents
    /// The remote this connection talks to, for messages.
    public let remoteName: String
    /// The `remote` this connection was made with (nil: libpipewire's default), for the
    /// connections it opens for metadata it provides.
    let remoteArgument: String?

    let loop: ThreadLoop
    let eventQueue: EventQueue
    private(set) var context: OpaquePointer?
    private(set) var core: OpaquePointer?
    /// The registry proxy (the commands read bound ids through it; loop lock held).
    var registry: OpaquePointer?
    /// A second connection for objects this process implements and exports (the `default`
    /// metadata): the daemon calls back into an exported object, and doing that on the
    /// connection that also binds it stalls it. WirePlumber keeps an export core for the same reason.
    private var exportCore: OpaquePointer?
    private let coreHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    let registryHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)

    // Guarded by the loop lock.
    var graph = Graph()
    var boundObjects: [ObjectID: BoundObject] = [:]
    var createdObjects: [ObjectIdentifier: CreatedObject] = [:]
    var pendingSyncs: [Int32: LoopPromise<Void>] = [:]
    var nextRouteSequence: Int32 = 0
    /// The connections devices' params are read on, one per exporting client (the key: its
    /// `client.id`; nil for the one shared past `paramsChannelLimit`). See `DeviceParamsChannel`.
    var paramsChannels: [ObjectID?: DeviceParamsChannel] = [:]
    static let paramsChannelLimit = 4
    /// The connections playback streams' params are set on, one per streams' client (the key:
    /// its `client.id`; nil for the one shared past `controlChannelLimit`). See `StreamControlChannel`.
    var controlChannels: [ObjectID?: StreamControlChannel] = [:]
    static let controlChannelLimit = 8
    /// How long a device's params may be awaited before the device is said not to answer.
    let deviceParamsDeadline: Duration
    /// Waiters for every route reading in flight to end or pass its deadline (`connect`).
    var routesSettledWaiters: [LoopPromise<Void>] = []
    var graphWaiters: [UInt64: GraphWaiter] = [:]
    var nextWaiterToken: UInt64 = 0
    var failure: PipeWireError?
    /// Connections providing metadata objects, by name (`provideMetadata`).
    var providers: [String: (connection: PipeWireConnection, id: ObjectID)] = [:]
    /// Metadata objects a withdrawn provider made that the registry has not yet removed: still
    /// Earshot's, never the one to write to (until their global_remove, ids are not reused).
    var withdrawnMetadataIDs: Set<ObjectID> = []
    /// Second bindings of metadata objects being read afresh (`rereadMetadata`).
    var metadataRereads: [ObjectIdentifier: MetadataReread] = [:]
    private var isClosed = false

    /// Connects, then waits until the daemon has sent every existing object and its info.
    /// `remote` overrides the socket name; by default libpipewire honours `PIPEWIRE_REMOTE`,
    /// `PIPEWIRE_RUNTIME_DIR` and `XDG_RUNTIME_DIR` like every PipeWire client.
    /// - Parameter tracksGraph: false for a connection that only provides objects: it binds
    ///   nothing. (A client that binds a metadata object another client exports and goes
    ///   before the exporter answered the server's ping leaves that object's pending count
    ///   raised for ever on PipeWire 0.3.65: from then on the server forwards none of its
    ///   changes to anyone. Earshot's provider connection did exactly that when it closed
    ///   right after a returning WirePlumber's metadata appeared, and every later write to
    ///   WirePlumber's metadata looked lost.)
    /// - Parameter deviceParamsDeadline: how long a device's params (its routes) may be awaited;
    ///   a device that has not answered by then is reported (`.notice`) and the graph goes on
    ///   without its routes until they come.
    public static func connect(
        remote: String? = nil, applicationName: String = "earshot", tracksGraph: Bool = true,
        deviceParamsDeadline: Duration = .seconds(4)
    ) async throws(PipeWireError) -> PipeWireConnection {
        let connection = try PipeWireConnection(
            remote: remote, applicationName: applicationName, tracksGraph: tracksGraph, deviceParamsDeadline: deviceParamsDeadline)
        do {
            // The first round trip delivers every global (and binds it); the second, the
            // info of every bound object; the third, the Props of the playback streams
            // (subscribed to as their info came), so `ready` knows every stream's mute.
            try await connection.sync()
            try await connection.sync()
            try await connection.sync()
            // The devices' routes, asked for as their info came, each until its deadline.
            try await connection.routesSettled()
        } catch {
            connection.close()
            throw error
        }
        let graph = connection.snapshot()
        connection.loop.withLock { connection.eventQueue.append(.ready(graph)) }
        return connection
    }

    private init(remote: String?, applicationName: String, tracksGraph: Bool, deviceParamsDeadline: Duration) throws(PipeWireError) {
        remoteArgument = remote
        self.deviceParamsDeadline = deviceParamsDeadline
        remoteName = remote ?? getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "pipewire-0"
        coreHook.initialize(to: spa_hook())
        registryHook.initialize(to: spa_hook())
        loop = try ThreadLoop(name: "earshot-pipewire")
        eventQueue = EventQueue(loop: loop)
        events = PipeWireEvents(queue: eventQueue)
        guard let context = pw_context_new(loop.loop, nil, 0) else {
            // pw_context_new, pw_context_connect, pw_context_create_metadata, pw_core_export
            // and the proxy constructors set errno when they return NULL.
            throw PipeWireError.requestFailed(operation: "pw_context_new", code: -errno, message: "cannot create a context")
        }
        self.context = context
        try loop.start()
        try loop.withLock { () throws(PipeWireError) in
            var settings = ["application.name": applicationName]
            if let remote { settings["remote.name"] = remote }
            let props = try LibPipeWire.newProperties(settings)
            guard let core = pw_context_connect(context, props, 0) else {
                throw PipeWireError.cannotConnect(remote: remoteName, errno: errno)
            }
            self.core = core
            let me = Unmanaged.passUnretained(self).toOpaque()
            try check(CPipeWire_core_add_listener(core, coreHook, CallbackTables.core, me), "pw_core_add_listener")
            guard tracksGraph else { return }
            guard let registry = CPipeWire_core_get_registry(core) else {
                throw PipeWireError.requestFailed(operation: "pw_core_get_registry", code: -errno, message: "cannot get the registry")
            }
            self.registry = registry
            try check(CPipeWire_registry_add_listener(registry, registryHook, CallbackTables.registry, me), "pw_registry_add_listener")
        }
    }

    deinit {
        close()
        coreHook.deallocate()
        registryHook.deallocate()
    }

    /// Stops the loop thread and frees every proxy. Safe to call twice; never call it from a
    /// callback (the loop thread cannot join itself).
    public func close() {
        let alreadyClosed = loop.withLock { () -> Bool in
            defer { isClosed = true }
            return isClosed
        }
        guard !alreadyClosed else { return }
        let provided = loop.withLock { () -> [PipeWireConnection] in
            defer { providers.removeAll() }
            return providers.values.map(\.connection)
        }
        for provider in provided { provider.close() }
        loop.stop()
        // The loop thread is gone: nothing else touches the state now.
        failEverything(with: .closed, report: false)
        for object in boundObjects.values { object.handle.release() }
        boundObjects.removeAll()
        for reread in metadataRereads.values { reread.handle.release() }
        metadataRereads.removeAll()
        for channel in paramsChannels.values { channel.close() }
        paramsChannels.removeAll()
        for channel in controlChannels.values { channel.close(failing: .closed) }
        controlChannels.removeAll()
        for object in createdObjects.values { releaseCreated(object) }
        if let registry {
            CPipeWire_hook_remove(registryHook)
            pw_proxy_destroy(registry)
            self.registry = nil
        }
        // pw_core_disconnect always returns 0 (it destroys the proxy and frees the core).
        if let exportCore, exportCore != core {
            pw_core_disconnect(exportCore)
        }
        exportCore = nil
        if let core {
            CPipeWire_hook_remove(coreHook)
            pw_core_disconnect(core)
            self.core = nil
        }
        if let context {
            pw_context_destroy(context)
            self.context = nil
        }
        loop.withLock { eventQueue.finish() }
    }

    // MARK: Reading the graph

    /// A copy of the graph as this connection knows it now.
    public func snapshot() -> Graph {
        loop.withLock { graph }
    }

    /// Waits until `predicate` holds for the graph, or fails after `timeout` (a deadline, not a
    /// sleep: the predicate is checked after every change). The predicate runs on the loop
    /// thread: keep it quick and don't call the connection from it.
    public func waitUntil(
        _ what: String, timeout: Duration = .seconds(10), _ predicate: @escaping @Sendable (Graph) -> Bool
    ) async throws(PipeWireError) -> Graph {
        try await arm(what, predicate).value(timeout: timeout)
    }

    /// A condition being watched: registered at once (no change can slip by between arming it
    /// and acting), awaited later with `value(timeout:)`. The predicate runs on the loop thread
    /// right after each change is applied, so it can take timestamps as the change arrives.
    public struct ArmedWait: Sendable {
        let connection: PipeWireConnection
        let token: UInt64
        let promise: LoopPromise<Graph>
        let what: String

        public func value(timeout: Duration = .seconds(10)) async throws(PipeWireError) -> Graph {
            do {
                return try await promise.value(on: connection.loop, timeout: timeout, what: what)
            } catch {
                connection.loop.withLock { _ = connection.graphWaiters.removeValue(forKey: token) }
                throw error
            }
        }
    }

    /// Starts watching for `predicate` to hold (checked now, then after every change).
    public func arm(_ what: String, _ predicate: @escaping @Sendable (Graph) -> Bool) throws(PipeWireError) -> ArmedWait {
        let (token, promise) = try loop.withLock { () throws(PipeWireError) -> (UInt64, LoopPromise<Graph>) in
            try checkUsable()
            let promise = LoopPromise<Graph>()
            nextWaiterToken += 1
            if predicate(graph) {
                promise.fulfill(graph)
            } else {
                graphWaiters[nextWaiterToken] = GraphWaiter(predicate: predicate, promise: promise)
            }
            return (nextWaiterToken, promise)
        }
        return ArmedWait(connection: self, token: token, promise: promise, what: what)
    }

    /// Whether `id` is the global id of an object this connection created (a link) that still
    /// exists. Global ids are reused at once and a created object's id comes with its `bound`
    /// event, ahead of `events`: a `.removed(id)` still queued there may be about an older
    /// object with the same id, not this one.
    public func ownsLiveObject(_ id: ObjectID) -> Bool {
        loop.withLock { createdObjects.values.contains { $0.globalID == id } }
    }

    // MARK: Internals (loop lock held)

    func checkUsable() throws(PipeWireError) {
        loop.assertLockHeld()
        if isClosed { throw PipeWireError.closed }
        if let failure { throw failure }
    }

    func exportMetadata(named name: String) throws(PipeWireError) -> CreatedObject {
        loop.assertLockHeld()
        let props = try LibPipeWire.newProperties(["metadata.name": name])
        guard let implementation = pw_context_create_metadata(context, name, props, 0) else {
            throw PipeWireError.requestFailed(operation: "create metadata \"\(name)\"", code: -errno, message: "pw_context_create_metadata failed")
        }
        // A connection that binds nothing exports on its own core (see `exportCore`).
        if registry == nil { exportCore = core }
        if exportCore == nil {
            var settings = ["application.name": "earshot [export]"]
            if remoteName.hasPrefix("/") || getenv("PIPEWIRE_REMOTE") == nil { settings["remote.name"] = remoteName }
            let props: UnsafeMutablePointer<pw_properties>
            do throws(PipeWireError) {
                props = try LibPipeWire.newProperties(settings)
            } catch {
                pw_impl_metadata_destroy(implementation)
                throw error
            }
            exportCore = pw_context_connect(context, props, 0)
        }
        guard let exportCore else {
            let code = errno  // before the destroy below can change it
            pw_impl_metadata_destroy(implementation)
            throw PipeWireError.cannotConnect(remote: remoteName, errno: code)
        }
        let exported: (proxy: OpaquePointer?, errno: Int32)
        do throws(PipeWireError) {
            exported = try LibPipeWire.withDict(["metadata.name": name]) { dict in
                let proxy = pw_core_export(exportCore, CPipeWire_type_metadata(), dict, UnsafeMutableRawPointer(pw_impl_metadata_get_implementation(implementation)), 0)
                return (proxy: proxy, errno: errno)  // read before withDict frees the dict
            }
        } catch {
            pw_impl_metadata_destroy(implementation)
            throw error
        }
        guard let exported = exported.proxy else {
            pw_impl_metadata_destroy(implementation)
            throw PipeWireError.requestFailed(operation: "export metadata \"\(name)\"", code: -exported.errno, message: "pw_core_export failed")
        }
        let object = CreatedObject(proxy: exported, description: "export metadata \"\(name)\"", connection: self)
        object.onRelease = { pw_impl_metadata_destroy(implementation) }
        pw_proxy_add_listener(exported, object.handle.hook, CallbackTables.createdProxy, Unmanaged.passUnretained(object).toOpaque())
        createdObjects[ObjectIdentifier(object)] = object
        return object
    }

    func create(factory: String, kind: TrackedKind, props: Properties, description: String) throws(PipeWireError) -> CreatedObject {
        loop.assertLockHeld()
        let created = try LibPipeWire.withDict(props) { dict in
            let proxy = CPipeWire_core_create_object(core, factory, kind.typePointer, kind.clientVersion, dict)
            return (proxy: proxy, errno: errno)  // read before withDict frees the dict
        }
        guard let proxy = created.proxy.map({ OpaquePointer($0) }) else {
            throw PipeWireError.requestFailed(operation: description, code: -created.errno, message: "pw_core_create_object failed")
        }
        let object = CreatedObject(proxy: proxy, description: description, connection: self)
        pw_proxy_add_listener(proxy, object.handle.hook, CallbackTables.createdProxy, Unmanaged.passUnretained(object).toOpaque())
        createdObjects[ObjectIdentifier(object)] = object
        return object
    }

    func releaseCreated(_ object: CreatedObject) {
        loop.assertLockHeld()
        object.handle.release()
        object.onRelease?()
        object.onRelease = nil
        object.bound.fail(.noSuchObject(object.globalID ?? 0))
        createdObjects[ObjectIdentifier(object)] = nil
    }

    /// Fails every promise and waiter; reports the failure on `events` unless closing.
    func failEverything(with error: PipeWireError, report: Bool) {
        loop.assertLockHeld()
        if failure == nil { failure = error }
        for promise in pendingSyncs.values { promise.fail(error) }
        pendingSyncs.removeAll()
        for waiter in graphWaiters.values { waiter.promise.fail(error) }
        graphWaiters.removeAll()
        for waiter in routesSettledWaiters { waiter.fail(error) }
        routesSettledWaiters.removeAll()
        for object in createdObjects.values { object.bound.fail(error) }
        for channel in controlChannels.values { channel.fail(error) }
        if report {
            eventQueue.append(.disconnected(error))
            eventQueue.finish()
        }
    }

    /// Applies a change; if it changed anything, reports it and wakes the waiters it satisfies.
    func record(_ change: GraphChange) {
        loop.assertLockHeld()
        guard graph.apply(change) else { return }
        eventQueue.append(.changed(change))
        guard !graphWaiters.isEmpty else { return }
        for (token, waiter) in graphWaiters where waiter.predicate(graph) {
            graphWaiters[token] = nil
            waiter.promise.fulfill(graph)
        }
    }

    var registryPointer: OpaquePointer? { registry }
}

/// A device's route enumeration in flight (`DeviceRouteReader`).
struct RouteReading {
    let device: ObjectID
    let sequence: Int32
}

/// A caller of `waitUntil` and the condition it waits for.
struct GraphWaiter {
    let predicate: @Sendable (Graph) -> Bool
    let promise: LoopPromise<Graph>
}
