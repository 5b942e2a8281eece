import AudioGraph
import CPipeWire
import CPipeWireShims

/// The kinds of registry globals the connection binds and tracks.
enum TrackedKind: CaseIterable {
    case node, port, link, device, client, metadata

    init?(type: String) {
        guard let kind = TrackedKind.allCases.first(where: { $0.typeName == type }) else { return nil }
        self = kind
    }

    var typeName: String { String(cString: typePointer) }

    var typePointer: UnsafePointer<CChar> {
        switch self {
        case .node: return CPipeWire_type_node()
        case .port: return CPipeWire_type_port()
        case .link: return CPipeWire_type_link()
        case .device: return CPipeWire_type_device()
        case .client: return CPipeWire_type_client()
        case .metadata: return CPipeWire_type_metadata()
        }
    }

    /// The interface version this code was written against, capped by what the server offers.
    var clientVersion: UInt32 {
        switch self {
        case .node: return UInt32(PW_VERSION_NODE)
        case .port: return UInt32(PW_VERSION_PORT)
        case .link: return UInt32(PW_VERSION_LINK)
        case .device: return UInt32(PW_VERSION_DEVICE)
        case .client: return UInt32(PW_VERSION_CLIENT)
        case .metadata: return UInt32(PW_VERSION_METADATA)
        }
    }
}

/// A proxy plus the listener hook on it. `release()` unhooks and destroys the proxy; it must
/// run on the loop thread or with the loop lock held (or after the loop stopped).
final class ProxyHandle {
    let proxy: OpaquePointer
    let hook: UnsafeMutablePointer<spa_hook>
    private var released = false

    init(proxy: OpaquePointer) {
        self.proxy = proxy
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
    }

    func release() {
        guard !released else { return }
        released = true
        CPipeWire_hook_remove(hook)
        pw_proxy_destroy(proxy)
    }

    deinit {
        hook.deinitialize(count: 1)
        hook.deallocate()
    }
}

/// A registry global the connection bound to read its info. Its address is the `data`
/// pointer of its C callbacks; the connection's table keeps it alive until global_remove.
final class BoundObject {
    let id: ObjectID
    let kind: TrackedKind
    let handle: ProxyHandle
    /// The interface version it was bound with.
    let version: UInt32
    unowned let connection: PipeWireConnection
    /// A device's route params as they are read (devices only).
    let routeReader: DeviceRouteReader?
    /// Where a device's params are read (devices only, once first read).
    weak var paramsChannel: DeviceParamsChannel?
    /// A playback stream's Props are subscribed to (`PipeWireConnection.nodeParam`).
    var followsProps = false

    init(id: ObjectID, kind: TrackedKind, version: UInt32, proxy: OpaquePointer, connection: PipeWireConnection) {
        self.id = id
        self.kind = kind
        self.version = version
        self.handle = ProxyHandle(proxy: proxy)
        self.connection = connection
        routeReader = kind == .device ? DeviceRouteReader() : nil
    }
}

/// An object this connection created through a factory (a link, the `default` metadata).
/// PipeWire destroys it with the proxy unless `object.linger` was set.
final class CreatedObject {
    let handle: ProxyHandle
    let bound = LoopPromise<ObjectID>()
    let description: String
    var globalID: ObjectID?
    /// For a link: the nodes it joins (what `ownedLinks()` reports).
    var linkEnds: LinkEnds?
    /// Frees what backs the proxy (the local implementation of an exported object).
    var onRelease: (() -> Void)?
    unowned let connection: PipeWireConnection

    init(proxy: OpaquePointer, description: String, connection: PipeWireConnection) {
        self.handle = ProxyHandle(proxy: proxy)
        self.description = description
        self.connection = connection
    }
}

/// A second binding of a metadata object, made to read its properties afresh
/// (`PipeWireConnection.rereadMetadata`): it collects what the exporter sends it, nothing else.
final class MetadataReread {
    /// Most property events one reread keeps (the `default` metadata holds a handful; a
    /// metadata object with more is not read again).
    static let maximumEvents = 4096

    let id: ObjectID
    let handle: ProxyHandle
    private(set) var events: [(subject: UInt32, key: String?, type: String?, value: String?)] = []
    private(set) var overflowed = false

    init(id: ObjectID, proxy: OpaquePointer) {
        self.id = id
        handle = ProxyHandle(proxy: proxy)
    }

    func property(subject: UInt32, key: String?, type: String?, value: String?) {
        guard events.count < Self.maximumEvents else {
            overflowed = true
            return
        }
        events.append((subject, key, type, value))
    }
}
