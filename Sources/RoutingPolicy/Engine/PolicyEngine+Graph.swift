import AudioGraph

/// Graph changes: keep the sink table in step, note arrivals (sinks that appear after start),
/// and tell apart the changes that cannot affect a decision (docs/policy.md, Inputs).
extension PolicyEngine {
    /// What a graph change did to the policy's inputs.
    enum GraphEffect {
        /// It changed what ranking reads: decide (with the jack or port event it was, if any).
        case decide(DecisionTrigger, reason: RouteChangeReason?, portEvent: PortEvent? = nil)
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
            let before = routesOfSinks(ofDevice: device.id)
            graph.apply(change)
            let trigger = DecisionTrigger.deviceChanged(device.props["device.name"] ?? "#\(device.id)")
            guard refreshNodes(ofDevice: device.id) else { return .unchanged(trigger) }
            let event = portEvent(ofDevice: device.id, before: before, at: now)
            return .decide(trigger, reason: nil, portEvent: event)

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
        // A reconnect gives every object a new id: a sink is known by its name.
        let before = Dictionary(sinks.features.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        graph = newGraph
        sinks = SinkTable()
        var anyArrived = false
        for node in newGraph.nodes.values {
            let known = node.name.flatMap { before[$0] }
            if known == nil, node.isAudioSink, node.name != nil { anyArrived = true }
            if let sink = SinkFeatures(node: node, graph: newGraph, config: config, arrivedAt: known == nil ? now : known?.arrivedAt) {
                sinks.upsert(sink)
            }
        }
        // A reconnect changes nothing by itself (§5): the default found holds, unless a sink
        // arrived meanwhile.
        if anyArrived { sinkArrived() } else { holdCurrentDefault() }
        return decide(.graphReplaced, reason: anyArrived ? .newDeviceAvailable : nil, at: now)
    }

    /// The route view of each sink of a device, by node id, before a device change.
    private func routesOfSinks(ofDevice device: ObjectID) -> [ObjectID: SinkRoutes] {
        var result: [ObjectID: SinkRoutes] = [:]
        for node in graph.sinks where node.deviceID == device {
            if let slot = sinks.slot(id: node.id), let routes = sinks[slot].routes { result[node.id] = routes }
        }
        return result
    }

    /// What a device change did to its sinks' ports (docs/policy.md §6): a personal port
    /// (headphones, headset) plugged in counts as its sink's arrival (it ends the override and
    /// ranks at `arrived`, once the card plays it); the default sink's active port unplugged is
    /// `old-device-unavailable` even when the sink stays. An unplug on the default wins over a
    /// plug elsewhere in the same change.
    private mutating func portEvent(ofDevice device: ObjectID, before: [ObjectID: SinkRoutes], at now: Milliseconds) -> PortEvent? {
        var plugged: PortEvent?
        var unplugged: PortEvent?
        for node in graph.sinks where node.deviceID == device {
            guard let old = before[node.id], let slot = sinks.slot(id: node.id), let new = sinks[slot].routes else { continue }
            let name = sinks[slot].name
            if name == currentDefault, old.activeAvailable, let active = old.activeName, new.unplugged.contains(active) {
                unplugged = PortEvent(kind: .unplugged, sink: name, port: old.activeLabel ?? active)
            }
            let newlyPlugged = new.pluggedPersonal.keys.filter { old.pluggedPersonal[$0] == nil }.sorted()
            if let first = newlyPlugged.first, let label = new.pluggedPersonal[first] {
                var sink = sinks[slot]
                sink.arrivedAt = now
                sinks.upsert(sink)
                plugged = PortEvent(kind: .plugged, sink: name, port: label)
            }
        }
        if plugged != nil { sinkArrived() }
        return unplugged ?? plugged
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
