import AudioGraph

/// Graph changes: keep the sink table in step, and note arrivals (sinks that appear after start).
extension PolicyEngine {
    mutating func applyGraphChange(_ change: GraphChange, at now: Milliseconds) -> Decision {
        switch change {
        case .node(let node):
            let known = sinks.slot(id: node.id).map { sinks[$0] }
            graph.apply(change)
            let arrived = known == nil && node.isAudioSink && node.name != nil
            refreshNode(node.id, arrivedAt: arrived ? now : known?.arrivedAt)
            if arrived {
                sinkArrived()
                return decide(.sinkAdded(node.name ?? "#\(node.id)"), reason: .newDeviceAvailable, at: now)
            }
            return decide(.nodeChanged(node.name ?? "#\(node.id)"), reason: nil, at: now)

        case .device(let device):
            graph.apply(change)
            refreshNodes(ofDevice: device.id)
            return decide(.deviceChanged(device.props["device.name"] ?? "#\(device.id)"), reason: nil, at: now)

        case .removed(let id):
            let name = graph.nodes[id]?.name ?? graph.devices[id]?.props["device.name"] ?? "#\(id)"
            let wasDevice = graph.devices[id] != nil
            graph.apply(change)
            sinks.remove(id: id)
            if wasDevice { refreshNodes(ofDevice: id) }
            return decide(.removed(name), reason: .oldDeviceUnavailable, at: now)

        case .port, .link, .client, .metadata, .metadataProperty:
            graph.apply(change)
            return decide(.otherGraphChange, reason: nil, at: now)
        }
    }

    mutating func replaceGraph(_ newGraph: Graph, at now: Milliseconds) -> Decision {
        let before = Dictionary(sinks.features.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        graph = newGraph
        sinks = SinkTable()
        var anyArrived = false
        for node in newGraph.nodes.values {
            let known = before[node.id].flatMap { $0.name == node.name ? $0 : nil }
            if known == nil, node.isAudioSink, node.name != nil { anyArrived = true }
            if let sink = SinkFeatures(node: node, graph: newGraph, config: config, arrivedAt: known == nil ? now : known?.arrivedAt) {
                sinks.upsert(sink)
            }
        }
        if anyArrived { sinkArrived() }
        return decide(.graphReplaced, reason: anyArrived ? .newDeviceAvailable : nil, at: now)
    }

    private mutating func refreshNode(_ id: ObjectID, arrivedAt: Milliseconds?) {
        guard let node = graph.nodes[id],
            let sink = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivedAt)
        else {
            sinks.remove(id: id)
            return
        }
        sinks.upsert(sink)
    }

    private mutating func refreshNodes(ofDevice device: ObjectID) {
        for node in graph.nodes.values where node.deviceID == device {
            let arrivedAt = sinks.slot(id: node.id).flatMap { sinks[$0].arrivedAt }
            refreshNode(node.id, arrivedAt: arrivedAt)
        }
    }
}
