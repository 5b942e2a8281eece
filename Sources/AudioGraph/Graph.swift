/// The PipeWire objects that matter for routing, keyed by global id. A live client and a
/// decoded `pw-dump` both produce this one type.
public struct Graph: Sendable, Hashable, Codable {
    public var nodes: [ObjectID: Node] = [:]
    public var ports: [ObjectID: Port] = [:]
    public var links: [ObjectID: Link] = [:]
    public var devices: [ObjectID: Device] = [:]
    public var clients: [ObjectID: Client] = [:]
    public var metadata: [ObjectID: Metadata] = [:]

    public init() {}

    /// Applies one change; returns false when it changed nothing.
    @discardableResult
    public mutating func apply(_ change: GraphChange) -> Bool {
        switch change {
        case .node(let node): return replace(&nodes, node.id, node)
        case .port(let port): return replace(&ports, port.id, port)
        case .link(let link): return replace(&links, link.id, link)
        case .device(let device): return replace(&devices, device.id, device)
        case .client(let client): return replace(&clients, client.id, client)
        case .metadata(let object): return replace(&metadata, object.id, object)
        case .metadataProperty(let id, let subject, let key, let type, let value):
            guard var object = metadata[id] else { return false }
            let before = object.entries
            object.set(subject: subject, key: key, type: type, value: value)
            guard object.entries != before else { return false }
            metadata[id] = object
            return true
        case .removed(let id):
            return nodes.removeValue(forKey: id) != nil || ports.removeValue(forKey: id) != nil
                || links.removeValue(forKey: id) != nil || devices.removeValue(forKey: id) != nil
                || clients.removeValue(forKey: id) != nil || metadata.removeValue(forKey: id) != nil
        }
    }

    private func replace<Value: Equatable>(
        _ table: inout [ObjectID: Value], _ id: ObjectID, _ value: Value
    ) -> Bool {
        // A non-mutating read first: most info events repeat what we have.
        if table[id] == value { return false }
        table[id] = value
        return true
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
