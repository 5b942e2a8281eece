import AudioGraph

/// Graph changes: keep the sink table in step, note arrivals (sinks that appear after start),
/// and tell apart the changes that cannot affect a decision (docs/policy.md, Inputs).
extension PolicyEngine {
    /// What a graph change did to the policy's inputs.
    enum GraphEffect {
        /// It changed what ranking reads: decide.
        case decide(DecisionTrigger, reason: RouteChangeReason?)
        /// It cannot change any decision: no ranking.
        case unchanged(DecisionTrigger)
    }

    mutating func applyGraphChange(_ change: GraphChange, at now: Milliseconds) -> GraphEffect {
        switch change {
        case .node(let node):
            let known = sinks.slot(id: node.id).map { sinks[$0] }
            graph.apply(change)
            let trigger = DecisionTrigger.nodeChanged(node.name ?? "#\(node.id)")
            let arrived = known == nil && node.isAudioSink && node.name != nil
            let changed = refreshNode(node.id, arrivedAt: arrived ? now : known?.arrivedAt)
            if arrived {
                sinkArrived()
                return .decide(.sinkAdded(node.name ?? "#\(node.id)"), reason: .newDeviceAvailable)
            }
            return changed ? .decide(trigger, reason: nil) : .unchanged(trigger)

        case .device(let device):
            graph.apply(change)
            let trigger = DecisionTrigger.deviceChanged(device.props["device.name"] ?? "#\(device.id)")
            return refreshNodes(ofDevice: device.id) ? .decide(trigger, reason: nil) : .unchanged(trigger)

        case .removed(let id):
            let name = graph.nodes[id]?.name ?? graph.devices[id]?.props["device.name"] ?? "#\(id)"
            let trigger = DecisionTrigger.removed(name)
            let wasDevice = graph.devices[id] != nil
            let wasDefaultMetadata = graph.metadata[id]?.name == "default"
            graph.apply(change)
            var changed = sinks.remove(id: id) != nil || wasDefaultMetadata
            if wasDevice, refreshNodes(ofDevice: id) { changed = true }
            return changed ? .decide(trigger, reason: .oldDeviceUnavailable) : .unchanged(trigger)

        case .metadata(let object):
            let before = Self.defaultKeys(of: graph.metadata[object.id])
            graph.apply(change)
            let after = Self.defaultKeys(of: graph.metadata[object.id])
            return before != after ? .decide(.otherGraphChange, reason: nil) : .unchanged(.otherGraphChange)

        case .metadataProperty(let id, _, let key, _, _):
            let isDefault = graph.metadata[id]?.name == "default"
            let changed = graph.apply(change)
            let defaultKey = key == nil || key == Graph.configuredSinkKey || key == Graph.effectiveSinkKey
            return changed && isDefault && defaultKey ? .decide(.otherGraphChange, reason: nil) : .unchanged(.otherGraphChange)

        case .port, .link, .client:
            graph.apply(change)
            return .unchanged(.otherGraphChange)
        }
    }

    /// The default sink keys of the `default` metadata object (nil for any other object).
    private static func defaultKeys(of metadata: Metadata?) -> [String?]? {
        guard let metadata, metadata.name == "default" else { return nil }
        return [metadata[0, Graph.configuredSinkKey]?.value, metadata[0, Graph.effectiveSinkKey]?.value]
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

    /// Recomputes one node's sink features; returns whether anything ranking reads changed.
    private mutating func refreshNode(_ id: ObjectID, arrivedAt: Milliseconds?) -> Bool {
        guard let node = graph.nodes[id],
            var sink = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivedAt)
        else {
            return sinks.remove(id: id) != nil
        }
        if let slot = sinks.slot(id: id) {
            sink.nameRank = sinks[slot].nameRank
            if sinks[slot] == sink { return false }
        }
        sinks.upsert(sink)
        return true
    }

    /// Recomputes the sinks of a device; returns whether any of them changed.
    private mutating func refreshNodes(ofDevice device: ObjectID) -> Bool {
        var changed = false
        for node in graph.nodes.values where node.deviceID == device {
            let arrivedAt = sinks.slot(id: node.id).flatMap { sinks[$0].arrivedAt }
            if refreshNode(node.id, arrivedAt: arrivedAt) { changed = true }
        }
        return changed
    }
}
