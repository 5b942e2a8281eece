extension Graph {
    /// The graph with one spelling for every value: numeric properties as pw-dump prints
    /// them and JSON metadata values re-encoded with sorted keys. A live snapshot and a
    /// pw-dump of the same daemon compare equal after this.
    public func canonicalized() -> Graph {
        var copy = self
        copy.nodes = nodes.mapValues { var node = $0; node.props = node.props.canonicalized(); return node }
        copy.ports = ports.mapValues { var port = $0; port.props = port.props.canonicalized(); return port }
        copy.links = links.mapValues { var link = $0; link.props = link.props.canonicalized(); return link }
        copy.devices = devices.mapValues { var device = $0; device.props = device.props.canonicalized(); return device }
        copy.clients = clients.mapValues { var client = $0; client.props = client.props.canonicalized(); return client }
        copy.metadata = metadata.mapValues { object in
            var object = object
            object.props = object.props.canonicalized()
            object.entries = object.entries.mapValues { entry in
                var entry = entry
                if let json = try? JSONValue.parse(entry.value), entry.type == "Spa:String:JSON" || entry.type == nil {
                    entry.value = json.propertyText ?? entry.value
                }
                return entry
            }
            return object
        }
        return copy
    }
}

extension Dictionary where Key == String, Value == String {
    func canonicalized() -> Properties { mapValues(PropertyText.canonical) }
}
