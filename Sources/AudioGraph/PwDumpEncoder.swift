/// Writes a `Graph` as `pw-dump` prints it (the subset routing reads: nodes, devices, ports,
/// links, clients and metadata), so a graph Earshot saw can be replayed by `earshot eval` or
/// read back by `PwDumpDecoder`: `decode(encode(graph)) == graph` (for every graph a live
/// connection or the decoder makes: a `mute` is read back for playback streams only, see
/// `Node.mute`).
public enum PwDumpEncoder {
    /// The whole graph, objects in id order (pw-dump's own order).
    public static func encode(_ graph: Graph) -> JSONValue {
        var objects: [(ObjectID, JSONValue)] = []
        objects.reserveCapacity(graph.nodes.count + graph.ports.count + graph.links.count + graph.devices.count + graph.clients.count + graph.metadata.count)
        for node in graph.nodes.values { objects.append((node.id, object(node))) }
        for device in graph.devices.values { objects.append((device.id, object(device))) }
        for port in graph.ports.values { objects.append((port.id, object(port))) }
        for link in graph.links.values { objects.append((link.id, object(link))) }
        for client in graph.clients.values { objects.append((client.id, object(client))) }
        for metadata in graph.metadata.values { objects.append((metadata.id, object(metadata))) }
        return .array(objects.sorted { $0.0 < $1.0 }.map(\.1))
    }

    public static func object(_ node: Node) -> JSONValue {
        var info: [String: JSONValue] = ["props": props(node.props)]
        if let state = node.state { info["state"] = .string(state.rawValue) }
        if let inputPorts = node.inputPorts { info["n-input-ports"] = .integer(Int64(inputPorts)) }
        if let outputPorts = node.outputPorts { info["n-output-ports"] = .integer(Int64(outputPorts)) }
        // As pw-dump prints a stream's Props, reduced to what the graph holds of them.
        if let mute = node.mute { info["params"] = .object([PropsDecoder.props: .array([.object(["mute": .bool(mute)])])]) }
        return wrap(node.id, PwDumpDecoder.nodeType, info)
    }

    public static func object(_ device: Device) -> JSONValue {
        var info: [String: JSONValue] = ["props": props(device.props)]
        if let routes = device.routes { info["params"] = params(routes) }
        return wrap(device.id, PwDumpDecoder.deviceType, info)
    }

    /// A device's routes as pw-dump prints its `EnumRoute`, `Route` and `Profile` params.
    public static func params(_ routes: DeviceRoutes) -> JSONValue {
        var params: [String: JSONValue] = ["EnumRoute": .array(routes.all.map(route)), "Route": .array(routes.active.map(route))]
        if let profile = routes.profile { params["Profile"] = .array([.object(["index": .integer(Int64(profile))])]) }
        return .object(params)
    }

    static func route(_ route: DeviceRoute) -> JSONValue {
        var fields: [String: JSONValue] = [
            "index": .integer(Int64(route.index)), "direction": .string(route.direction == .output ? "Output" : "Input"),
            "name": .string(route.name), "priority": .integer(Int64(route.priority)), "available": .string(route.available.rawValue),
            "devices": .array(route.devices.map { .integer(Int64($0)) }), "profiles": .array(route.profiles.map { .integer(Int64($0)) }),
        ]
        if let description = route.description { fields["description"] = .string(description) }
        if let portType = route.portType { fields["info"] = .array([.integer(1), .string("port.type"), .string(portType)]) }
        if let device = route.device { fields["device"] = .integer(Int64(device)) }
        if let profile = route.profile { fields["profile"] = .integer(Int64(profile)) }
        return .object(fields)
    }

    public static func object(_ port: Port) -> JSONValue {
        wrap(port.id, PwDumpDecoder.portType, ["direction": .string(port.direction.rawValue), "props": props(port.props)])
    }

    public static func object(_ link: Link) -> JSONValue {
        var info: [String: JSONValue] = [
            "output-node-id": .integer(Int64(link.outputNode)), "output-port-id": .integer(Int64(link.outputPort)),
            "input-node-id": .integer(Int64(link.inputNode)), "input-port-id": .integer(Int64(link.inputPort)),
            "props": props(link.props),
        ]
        if let state = link.state { info["state"] = .string(state.rawValue) }
        return wrap(link.id, PwDumpDecoder.linkType, info)
    }

    public static func object(_ client: Client) -> JSONValue {
        wrap(client.id, PwDumpDecoder.clientType, ["props": props(client.props)])
    }

    /// Metadata has no `info`: its props and entries sit on the object, as pw-dump prints them.
    public static func object(_ metadata: Metadata) -> JSONValue {
        let entries = metadata.entries.values.sorted { ($0.subject, $0.key) < ($1.subject, $1.key) }.map { entry -> JSONValue in
            var fields: [String: JSONValue] = ["subject": .integer(Int64(entry.subject)), "key": .string(entry.key), "value": .string(entry.value)]
            if let type = entry.type { fields["type"] = .string(type) }
            return .object(fields)
        }
        return .object([
            "id": .integer(Int64(metadata.id)), "type": .string(PwDumpDecoder.metadataType),
            "props": props(metadata.props), "metadata": .array(entries),
        ])
    }

    private static func wrap(_ id: ObjectID, _ type: String, _ info: [String: JSONValue]) -> JSONValue {
        .object(["id": .integer(Int64(id)), "type": .string(type), "info": .object(info)])
    }

    private static func props(_ props: Properties) -> JSONValue {
        .object(props.mapValues(JSONValue.string))
    }
}
