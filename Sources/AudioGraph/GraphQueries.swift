/// Read-only views of a graph in routing terms.
extension Graph {
    /// Keys of the `default` metadata that name the user's and the effective default sink.
    public static let configuredSinkKey = "default.configured.audio.sink"
    public static let effectiveSinkKey = "default.audio.sink"
    /// The same for the default source (the microphone).
    public static let configuredSourceKey = "default.configured.audio.source"
    public static let effectiveSourceKey = "default.audio.source"

    public func ports(of node: ObjectID, direction: PortDirection) -> [Port] {
        ports.values.filter { $0.nodeID == node && $0.direction == direction }.sorted { $0.id < $1.id }
    }

    /// Links leaving `node`'s output ports.
    public func outgoingLinks(of node: ObjectID) -> [Link] {
        links.values.filter { $0.outputNode == node }.sorted { $0.id < $1.id }
    }

    /// The nodes `node` plays into, in id order, each once.
    public func linkedTargets(of node: ObjectID) -> [Node] {
        let ids = Set(outgoingLinks(of: node).map(\.inputNode))
        return ids.sorted().compactMap { nodes[$0] }
    }

    /// The metadata object named `default`, if any (WirePlumber implements it).
    public var defaultMetadata: Metadata? {
        metadata.values.filter { $0.name == "default" }.min { $0.id < $1.id }
    }

    /// The sink the user (or Earshot) configured: `default.configured.audio.sink`.
    public var configuredDefaultSinkName: String? {
        defaultMetadata?[0, Graph.configuredSinkKey]?.jsonName
    }

    /// The sink the session manager actually uses: `default.audio.sink`.
    public var effectiveDefaultSinkName: String? {
        defaultMetadata?[0, Graph.effectiveSinkKey]?.jsonName
    }

    /// The source the user (or Earshot) configured: `default.configured.audio.source`.
    public var configuredDefaultSourceName: String? {
        defaultMetadata?[0, Graph.configuredSourceKey]?.jsonName
    }

    /// The source the session manager actually uses: `default.audio.source`.
    public var effectiveDefaultSourceName: String? {
        defaultMetadata?[0, Graph.effectiveSourceKey]?.jsonName
    }

    /// Links arriving at `node`'s input ports.
    public func incomingLinks(of node: ObjectID) -> [Link] {
        links.values.filter { $0.inputNode == node }.sorted { $0.id < $1.id }
    }

    /// The nodes `node` records from, in id order, each once.
    public func linkedSources(of node: ObjectID) -> [Node] {
        let ids = Set(incomingLinks(of: node).map(\.outputNode))
        return ids.sorted().compactMap { nodes[$0] }
    }

    /// A property of the node, falling back to its device (BlueZ and ALSA put bus, form factor
    /// and address on the device).
    public func property(_ key: String, of node: Node) -> String? {
        if let value = node.props[key], !value.isEmpty { return value }
        guard let deviceID = node.deviceID, let value = devices[deviceID]?.props[key], !value.isEmpty
        else { return nil }
        return value
    }

    public func bluetoothAddress(of node: Node) -> String? { property("api.bluez5.address", of: node) }
    public func formFactor(of node: Node) -> String? { property("device.form-factor", of: node) }
    public func bus(of node: Node) -> String? { property("device.bus", of: node) }
}
