import AudioGraph

/// Graph changes: keep the sink table in step, note arrivals (sinks that appear after start),
/// and tell apart the changes that cannot affect a decision (docs/policy.md, Inputs).
extension PolicyEngine {
    /// What a graph change did to the policy's inputs.
    enum GraphEffect {
        /// It changed what ranking reads: decide (with the reasons for each side, and the jack
        /// or port event it was on each, if any).
        case decide(
            DecisionTrigger, reason: RouteChangeReason?, inputReason: RouteChangeReason?, portEvent: PortEvent? = nil,
            sourcePortEvent: PortEvent? = nil)
        /// It cannot change any decision: no ranking.
        case unchanged(DecisionTrigger)

        static func decide(_ trigger: DecisionTrigger, reason: RouteChangeReason?) -> GraphEffect {
            .decide(trigger, reason: reason, inputReason: reason)
        }
    }

    mutating func applyGraphChange(_ change: GraphChange, at now: Milliseconds) -> GraphEffect {
        switch change {
        case .node(let node):
            let knownSink = output.table.slot(id: node.id).map { output.table[$0] }
            let knownSource = input.table.slot(id: node.id).map { input.table[$0] }
            graph.apply(change)
            let name = node.name ?? "#\(node.id)"
            let trigger = DecisionTrigger.nodeChanged(name)
            let sinkArrived = knownSink == nil && node.isAudioSink && node.name != nil
            let sourceArrived = knownSource == nil && node.isAudioSource && node.name != nil
            // An arrival counts once it has settled (§1 `settling`): until then the node is
            // in the table but out of the running, and its arrival time is not yet its own.
            let sinkCounts = sinkArrived && noteArrival(of: node.id, named: name, on: .output, at: now)
            let sourceCounts = sourceArrived && noteArrival(of: node.id, named: name, on: .input, at: now)
            var changed = output.refresh(node.id, graph: graph, config: config, arrivedAt: sinkCounts ? now : knownSink?.arrivedAt)
            if input.refresh(node.id, graph: graph, config: config, arrivedAt: sourceCounts ? now : knownSource?.arrivedAt) { changed = true }
            if sinkCounts {
                output.arrived()
                return .decide(.sinkAdded(name), reason: .newDeviceAvailable, inputReason: nil)
            }
            if sourceCounts {
                input.arrived()
                return .decide(.sourceAdded(name), reason: nil, inputReason: .newDeviceAvailable)
            }
            if !changed, node.isCaptureStream, calls.noteStream(node, routing: callsRouted, config: config.input) { changed = true }
            return changed ? .decide(trigger, reason: nil) : .unchanged(trigger)

        case .device(let device):
            let before = [output.routesOfNodes(ofDevice: device.id, in: graph), input.routesOfNodes(ofDevice: device.id, in: graph)]
            graph.apply(change)
            let trigger = DecisionTrigger.deviceChanged(device.props["device.name"] ?? "#\(device.id)")
            var changed = false
            let (graph, config) = (graph, config)
            forEachSide { side in if side.refreshNodes(ofDevice: device.id, graph: graph, config: config) { changed = true } }
            guard changed else { return .unchanged(trigger) }
            let event = output.portEvent(ofDevice: device.id, before: before[0], in: graph, at: now)
            let sourceEvent = input.portEvent(ofDevice: device.id, before: before[1], in: graph, at: now)
            return .decide(trigger, reason: nil, inputReason: nil, portEvent: event, sourcePortEvent: sourceEvent)

        case .removed(let id):
            let name = graph.nodes[id]?.name ?? graph.devices[id]?.props["device.name"] ?? "#\(id)"
            let trigger = DecisionTrigger.removed(name)
            let wasDevice = graph.devices[id] != nil
            let wasDefaultMetadata = graph.metadata[id]?.name == "default"
            graph.apply(change)
            var changed = wasDefaultMetadata || calls.forgetStream(id)
            let (graph, config) = (graph, config)
            forEachSide { side in
                side.arrivals.forget(id)
                if side.table.remove(id: id) != nil { changed = true }
                if wasDevice, side.refreshNodes(ofDevice: id, graph: graph, config: config) { changed = true }
            }
            return changed ? .decide(trigger, reason: .oldDeviceUnavailable) : .unchanged(trigger)

        case .metadata(let object):
            let before = Self.defaultKeys(of: graph.metadata[object.id])
            graph.apply(change)
            let after = Self.defaultKeys(of: graph.metadata[object.id])
            return before != after ? .decide(.otherGraphChange, reason: nil) : .unchanged(.otherGraphChange)

        case .metadataProperty(let id, let subject, let key, _, _):
            let isDefault = graph.metadata[id]?.name == "default"
            let changed = graph.apply(change)
            let defaultKey = key == nil || Self.defaultKeyNames.contains(key ?? "")
            // A capture stream's target (§8): a call Earshot pointed, moved by someone else, or
            // one the session manager restored.
            let streamTarget = callsRouted && subject != 0 && (key == nil || key == "target.object" || key == "target.node")
                && graph.nodes[subject]?.isCaptureStream == true
            return changed && isDefault && (defaultKey || streamTarget) ? .decide(.otherGraphChange, reason: nil) : .unchanged(.otherGraphChange)

        case .port, .link, .client:
            graph.apply(change)
            return .unchanged(.otherGraphChange)
        }
    }

    /// Whether capture streams matter to a decision now: calls are routed (§8), or streams are
    /// still pointed from before.
    var callsRouted: Bool {
        followsInput && config.input.bluetoothMicrophone == .calls || !calls.pointed.isEmpty
    }

    /// Notes that a node of `direction`'s side arrived; true when the arrival counts now (no
    /// settle time), false when the node settles first (its timer is then pending). A node that
    /// has just started flapping is said once, in this input's decision.
    private mutating func noteArrival(of id: ObjectID, named name: String, on direction: AudioDirection, at now: Milliseconds) -> Bool {
        let (settle, hold) = (config.arrivalSettle, config.flapHold)
        let result = direction == .output
            ? output.arrivals.arrive(id, name: name, at: now, settle: settle, flapHold: hold)
            : input.arrivals.arrive(id, name: name, at: now, settle: settle, flapHold: hold)
        if var notice = result.newlyFlapping {
            notice.direction = direction
            pendingFlapping.append(notice)
        }
        return result.entry == nil
    }

    /// The settle timer (§1 `settling`): every node due by `now` that stayed arrives now, with
    /// the time it first appeared; an arrival ends the override as any arrival does (§5).
    mutating func settleArrivals(at now: Milliseconds) -> Decision {
        var names: [String] = []
        var arrivedOn: [AudioDirection] = []
        let (graph, config) = (graph, config)
        forEachSide { side in
            var any = false
            for (id, entry) in side.arrivals.settle(dueBy: now) where graph.nodes[id] != nil {
                _ = side.refresh(id, graph: graph, config: config, arrivedAt: entry.arrivedAt)
                names.append(entry.name)
                any = true
            }
            if any {
                side.arrived()
                arrivedOn.append(side.direction)
            }
        }
        let trigger: DecisionTrigger = names.isEmpty ? .nothingDue : .settled(names.joined(separator: ", "))
        return decide(
            trigger, reason: arrivedOn.contains(.output) ? .newDeviceAvailable : nil,
            inputReason: arrivedOn.contains(.input) ? .newDeviceAvailable : nil, at: now)
    }

    /// When the next node settles, if any does.
    var nextSettle: Milliseconds? {
        switch (output.arrivals.nextDue, input.arrivals.nextDue) {
        case (let a?, let b?): min(a, b)
        case (let a, let b): a ?? b
        }
    }

    private static let defaultKeyNames = [Graph.configuredSinkKey, Graph.effectiveSinkKey, Graph.configuredSourceKey, Graph.effectiveSourceKey]

    /// The default sink and source keys of the `default` metadata object (nil for any other
    /// object).
    private static func defaultKeys(of metadata: Metadata?) -> [String?]? {
        guard let metadata, metadata.name == "default" else { return nil }
        return defaultKeyNames.map { metadata[0, $0]?.value }
    }

    mutating func replaceGraph(_ newGraph: Graph, at now: Milliseconds) -> Decision {
        graph = newGraph
        calls.invalidate()
        var arrived: [Bool] = []
        let config = config
        forEachSide { side in
            // A reconnect gives every object a new id: a node is known by its name.
            let before = Dictionary(side.table.features.map { ($0.name, $0.arrivedAt) }, uniquingKeysWith: { a, _ in a })
            // Nodes still settling had not arrived yet: they arrive with the new graph.
            let settling = side.arrivals.dropSettling()
            var anyArrived = false
            side.rebuild(graph: newGraph, config: config) { id in
                guard let name = newGraph.nodes[id]?.name, let known = before[name], !settling.contains(name) else {
                    anyArrived = true
                    return now
                }
                return known
            }
            // A reconnect changes nothing by itself (§5): the default found holds, unless a
            // node arrived meanwhile.
            if anyArrived { side.arrived() } else { side.holdCurrentDefault(in: newGraph) }
            arrived.append(anyArrived)
        }
        return decide(
            .graphReplaced, reason: arrived[0] ? .newDeviceAvailable : nil, inputReason: arrived[1] ? .newDeviceAvailable : nil, at: now)
    }
}

/// Graph changes on one side's table.
extension EndpointSide {
    /// The route view of each node of this side of a device, by node id, before a device change.
    func routesOfNodes(ofDevice device: ObjectID, in graph: Graph) -> [ObjectID: SinkRoutes] {
        var result: [ObjectID: SinkRoutes] = [:]
        for feature in table.features where feature.deviceID == device {
            if let routes = feature.routes { result[feature.id] = routes }
        }
        return result
    }

    /// What a device change did to this side's ports (docs/policy.md §6): a personal port
    /// (headphones, headset) plugged in counts as its node's arrival (it ends the override and
    /// ranks at `arrived`, once the card plays it); the default's active port unplugged is
    /// `old-device-unavailable` even when the node stays. An unplug on the default wins over a
    /// plug elsewhere in the same change.
    mutating func portEvent(ofDevice device: ObjectID, before: [ObjectID: SinkRoutes], in graph: Graph, at now: Milliseconds) -> PortEvent? {
        var plugged: PortEvent?
        var unplugged: PortEvent?
        for (id, old) in before.sorted(by: { $0.key < $1.key }) {
            guard let slot = table.slot(id: id), let new = table[slot].routes else { continue }
            let name = table[slot].name
            if name == currentDefault, old.activeAvailable, let active = old.activeName, new.unplugged.contains(active) {
                unplugged = PortEvent(kind: .unplugged, sink: name, port: old.activeLabel ?? active)
            }
            let newlyPlugged = new.pluggedPersonal.keys.filter { old.pluggedPersonal[$0] == nil }.sorted()
            if let first = newlyPlugged.first, let label = new.pluggedPersonal[first] {
                var node = table[slot]
                node.arrivedAt = now
                table.upsert(node)
                plugged = PortEvent(kind: .plugged, sink: name, port: label)
            }
        }
        if plugged != nil { arrived() }
        return unplugged ?? plugged
    }

    /// Recomputes one node's features; returns whether anything ranking reads changed.
    mutating func refresh(_ id: ObjectID, graph: Graph, config: PolicyConfig, arrivedAt: Milliseconds?) -> Bool {
        guard let node = graph.nodes[id],
            var features = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivedAt, direction: direction)
        else {
            return table.remove(id: id) != nil
        }
        if let slot = table.slot(id: id) {
            features.nameRank = table[slot].nameRank
            if table[slot] == features { return false }
        }
        table.upsert(features)
        return true
    }

    /// Recomputes this side's nodes of a device; returns whether any of them changed.
    mutating func refreshNodes(ofDevice device: ObjectID, graph: Graph, config: PolicyConfig) -> Bool {
        var changed = false
        for node in graph.nodes.values where node.deviceID == device {
            let arrivedAt = table.slot(id: node.id).flatMap { table[$0].arrivedAt }
            if refresh(node.id, graph: graph, config: config, arrivedAt: arrivedAt) { changed = true }
        }
        // A node whose device went (or that left the device) is no longer listed under it.
        for feature in table.features where feature.deviceID == device && graph.nodes[feature.id]?.deviceID != device {
            if refresh(feature.id, graph: graph, config: config, arrivedAt: feature.arrivedAt) { changed = true }
        }
        return changed
    }
}
