/// The PipeWire objects that matter for routing, keyed by global id. A live client and a
/// decoded `pw-dump` both produce this one type.
///
/// Nodes are also indexed by name and by kind (sinks, playback streams), kept up to date by
/// `apply(_:)`, so `node(named:)`, `sinks` and `playbackStreams` neither scan nor sort. The
/// indexes are derived: equality, hashing and coding see only the object tables.
public struct Graph: Sendable, Hashable, Codable {
    /// Every node by id. Assigning the whole table (or through it) rebuilds the indexes; prefer
    /// `apply(.node(_))`, which updates them in place.
    public var nodes: [ObjectID: Node] {
        get { nodeTable }
        set {
            nodeTable = newValue
            reindex()
        }
    }
    public var ports: [ObjectID: Port] = [:]
    public var links: [ObjectID: Link] = [:]
    public var devices: [ObjectID: Device] = [:]
    public var clients: [ObjectID: Client] = [:]
    public var metadata: [ObjectID: Metadata] = [:]

    private var nodeTable: [ObjectID: Node] = [:]
    /// Ids of the nodes with each `node.name`, ascending (names are not unique in PipeWire).
    private var idsByName: [String: [ObjectID]] = [:]
    /// Ids of audio sinks and of playback streams, ascending.
    private var sinkIDs: [ObjectID] = []
    private var streamIDs: [ObjectID] = []
    /// Ids of audio sources and of capture streams, ascending.
    private var sourceIDs: [ObjectID] = []
    private var captureIDs: [ObjectID] = []

    public init() {}

    /// Applies one change; returns false when it changed nothing.
    @discardableResult
    public mutating func apply(_ change: GraphChange) -> Bool {
        switch change {
        case .node(let node):
            let old = nodeTable[node.id]
            if old == node { return false }
            nodeTable[node.id] = node
            unindex(old)
            index(node)
            return true
        case .port(let port): return Self.replace(&ports, port.id, port)
        case .link(let link): return Self.replace(&links, link.id, link)
        case .device(let device): return Self.replace(&devices, device.id, device)
        case .client(let client): return Self.replace(&clients, client.id, client)
        case .metadata(let object): return Self.replace(&metadata, object.id, object)
        case .metadataProperty(let id, let subject, let key, let type, let value):
            guard var object = metadata[id] else { return false }
            let before = object.entries
            object.set(subject: subject, key: key, type: type, value: value)
            guard object.entries != before else { return false }
            metadata[id] = object
            return true
        case .removed(let id):
            // PipeWire's metadata module drops every key of a global that goes (module-metadata
            // `context_global_removed`; 0.3.65 tells no client, 1.4 sends a subject clear): so
            // does the graph, or a stream's target would seem to outlive it.
            clearMetadata(ofSubject: id)
            if let node = nodeTable.removeValue(forKey: id) {
                unindex(node)
                return true
            }
            return ports.removeValue(forKey: id) != nil || links.removeValue(forKey: id) != nil
                || devices.removeValue(forKey: id) != nil || clients.removeValue(forKey: id) != nil
                || metadata.removeValue(forKey: id) != nil
        }
    }

    private mutating func clearMetadata(ofSubject subject: ObjectID) {
        guard subject != 0 else { return }
        for (id, object) in metadata where object.entries.keys.contains(where: { $0.subject == subject }) {
            metadata[id]?.set(subject: subject, key: nil, type: nil, value: nil)
        }
    }

    /// Audio sinks, in id order.
    public var sinks: [Node] { sinkIDs.compactMap { nodeTable[$0] } }
    /// Playback streams, in id order.
    public var playbackStreams: [Node] { streamIDs.compactMap { nodeTable[$0] } }
    /// Audio sources (microphones), in id order.
    public var sources: [Node] { sourceIDs.compactMap { nodeTable[$0] } }
    /// Capture streams, in id order.
    public var captureStreams: [Node] { captureIDs.compactMap { nodeTable[$0] } }

    /// The node named `name`; of several with that name, the one with the smallest id.
    public func node(named name: String) -> Node? {
        idsByName[name]?.first.flatMap { nodeTable[$0] }
    }

    /// Every node named `name`, in id order.
    public func nodes(named name: String) -> [Node] {
        (idsByName[name] ?? []).compactMap { nodeTable[$0] }
    }

    /// Static, not an instance method: calling a method of `self` while passing `&self.table`
    /// made a copy of the graph for the call, so every write copied the whole table.
    private static func replace<Value: Equatable>(
        _ table: inout [ObjectID: Value], _ id: ObjectID, _ value: Value
    ) -> Bool {
        // A non-mutating read first: most info events repeat what we have.
        if table[id] == value { return false }
        table[id] = value
        return true
    }

    // MARK: Indexes

    private mutating func index(_ node: Node) {
        if let name = node.name { Self.insert(node.id, into: &idsByName[name, default: []]) }
        if node.isAudioSink { Self.insert(node.id, into: &sinkIDs) }
        if node.isPlaybackStream { Self.insert(node.id, into: &streamIDs) }
        if node.isAudioSource { Self.insert(node.id, into: &sourceIDs) }
        if node.isCaptureStream { Self.insert(node.id, into: &captureIDs) }
    }

    private mutating func unindex(_ node: Node?) {
        guard let node else { return }
        if let name = node.name {
            Self.remove(node.id, from: &idsByName[name, default: []])
            if idsByName[name]?.isEmpty == true { idsByName[name] = nil }
        }
        if node.isAudioSink { Self.remove(node.id, from: &sinkIDs) }
        if node.isPlaybackStream { Self.remove(node.id, from: &streamIDs) }
        if node.isAudioSource { Self.remove(node.id, from: &sourceIDs) }
        if node.isCaptureStream { Self.remove(node.id, from: &captureIDs) }
    }

    private mutating func reindex() {
        idsByName = [:]
        sinkIDs = []
        streamIDs = []
        sourceIDs = []
        captureIDs = []
        for id in nodeTable.keys.sorted() {
            guard let node = nodeTable[id] else { continue }
            if let name = node.name { idsByName[name, default: []].append(id) }
            if node.isAudioSink { sinkIDs.append(id) }
            if node.isPlaybackStream { streamIDs.append(id) }
            if node.isAudioSource { sourceIDs.append(id) }
            if node.isCaptureStream { captureIDs.append(id) }
        }
    }

    private static func insert(_ id: ObjectID, into ids: inout [ObjectID]) {
        let at = position(of: id, in: ids)
        if at == ids.count || ids[at] != id { ids.insert(id, at: at) }
    }

    private static func remove(_ id: ObjectID, from ids: inout [ObjectID]) {
        let at = position(of: id, in: ids)
        if at < ids.count, ids[at] == id { ids.remove(at: at) }
    }

    /// Binary search: the first index whose id is not below `id`.
    private static func position(of id: ObjectID, in ids: [ObjectID]) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    // MARK: Equality and coding see the tables only

    public static func == (a: Graph, b: Graph) -> Bool {
        a.nodeTable == b.nodeTable && a.ports == b.ports && a.links == b.links && a.devices == b.devices
            && a.clients == b.clients && a.metadata == b.metadata
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(nodeTable)
        hasher.combine(ports)
        hasher.combine(links)
        hasher.combine(devices)
        hasher.combine(clients)
        hasher.combine(metadata)
    }

    private enum CodingKeys: String, CodingKey {
        case nodes, ports, links, devices, clients, metadata
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nodes = try container.decode([ObjectID: Node].self, forKey: .nodes)
        ports = try container.decode([ObjectID: Port].self, forKey: .ports)
        links = try container.decode([ObjectID: Link].self, forKey: .links)
        devices = try container.decode([ObjectID: Device].self, forKey: .devices)
        clients = try container.decode([ObjectID: Client].self, forKey: .clients)
        metadata = try container.decode([ObjectID: Metadata].self, forKey: .metadata)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(nodeTable, forKey: .nodes)
        try container.encode(ports, forKey: .ports)
        try container.encode(links, forKey: .links)
        try container.encode(devices, forKey: .devices)
        try container.encode(clients, forKey: .clients)
        try container.encode(metadata, forKey: .metadata)
    }
}

/// One change to a `Graph`, as reported by the registry and the bound objects.
public enum GraphChange: Sendable, Hashable {
    case node(Node)
    case port(Port)
    case link(Link)
    case device(Device)
    case client(Client)
    case metadata(Metadata)
    /// A metadata `property` event: nil key clears the subject, nil value removes the key.
    case metadataProperty(metadata: ObjectID, subject: ObjectID, key: String?, type: String?, value: String?)
    case removed(ObjectID)
}
