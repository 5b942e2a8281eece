import AudioGraph

/// Buffers the ranking reuses between decisions, so ranking allocates only its results.
struct RankingScratch: Sendable, Hashable {
    /// Eligible sinks in table order, before sorting.
    var candidates: [RankedSink] = []
    /// Their name ranks, for the tie-break after the last tier.
    var nameRanks: [Int] = []
    /// Each candidate's packed rank and name rank, by candidate index.
    var keys: [RankingEntry] = []
    /// Candidate indexes, sorted: four bytes to move, where an entry is eighty.
    var order: [Int32] = []
    /// The declarations of this side's tier order (each side keeps its own scratch, so one
    /// side's order is never reused for the other), looked up once per change of the order.
    var tierOrder: [RankTier] = []
    var tiers: [any TierRule.Type] = []
    /// Per candidate index: kept for calls only (§8), ranked but never the default.
    var callsOnly: [Bool] = []

    static func == (a: RankingScratch, b: RankingScratch) -> Bool { a.candidates == b.candidates && a.keys == b.keys && a.order == b.order }

    func hash(into hasher: inout Hasher) {
        hasher.combine(candidates)
        hasher.combine(order)
    }
}

struct RankingEntry: Sendable, Hashable {
    var key: SortKey
    var nameRank: Int
    var index: Int
}

/// Eligibility (§1) and ranking (§2): one pass over a side's table fills each eligible node's
/// rank, then a sort compares ranks tier by tier in the side's `tier-order` with the node name
/// as the stable tie-break. Both sides rank this way (§8); `[input] tier-order` may reorder the
/// input's tiers.
extension EndpointSide {
    /// What ranking reads of the engine besides the side itself.
    struct Context {
        var accessories: AccessoryRegistry
        var hostAddresses: [BluetoothAddress]
        var config: PolicyConfig
        /// The input side: the accessory of each device whose sink an accessory known by its
        /// node name owns (a USB headset's source has no address and another name).
        var accessoryOfDevice: [ObjectID: AccessoryIdentity] = [:]
        /// The input side: the worn accessory the output's winner belongs to (its sources pair).
        var pairedAccessory: AccessoryIdentity?
        /// The graph, to tell a default this side does not rank (a sink's monitor as the
        /// default source) from one that is gone.
        var graph: Graph
        /// The input side: `[input] bluetooth-microphone` and what it needs to know; nil ranks
        /// every Bluetooth microphone as any other.
        var callsOnly: CallsOnlyInputs?
    }

    /// One ranking: the eligible nodes best first, the rejected ones, and (the input) the
    /// Bluetooth microphones kept for calls, ranked as they would be if eligible, best first.
    struct Ranked {
        var ranking: [RankedSink]
        var rejected: [RejectedSink]
        var callsOnly: [RankedSink] = []
    }

    mutating func rank(_ context: borrowing Context) -> Ranked {
        table.rankNames()
        let overrideSlot = userOverride.flatMap { table.slot(named: $0) }
        let restoreSlot = restoreHold.flatMap { table.slot(named: $0) }
        let lastChoiceSlot = lastUserChoice.flatMap { table.slot(named: $0) }
        var ranking = scratch.candidates
        scratch.candidates = []
        ranking.removeAll(keepingCapacity: true)
        var rejected: [RejectedSink] = []
        scratch.nameRanks.removeAll(keepingCapacity: true)
        scratch.callsOnly.removeAll(keepingCapacity: true)
        var anyCallsOnly = false

        for slot in 0..<table.count {
            let sink = table[slot]
            // A node that cannot play ends even the user's pick, as a gone one does (§1, §5).
            if let routes = sink.routes, !routes.isAvailable {
                rejected.append(RejectedSink(node: sink.name, rejection: .unavailable(port: routes.label)))
                continue
            }
            if sink.hasNoPorts {
                rejected.append(RejectedSink(node: sink.name, rejection: .noPorts))
                continue
            }
            // An arrival counts once it has settled; only the user's own pick takes it sooner.
            if !arrivals.isEmpty, slot != overrideSlot, let settling = arrivals.settling[sink.id] {
                rejected.append(RejectedSink(node: sink.name, rejection: .settling(until: settling.until, flapping: settling.flapping)))
                continue
            }
            // The user's pick holds even where a rule of §1 would leave the node out (§5).
            var setAside: Rejection?
            if let rule = sink.ignoredBy {
                guard slot == overrideSlot else {
                    rejected.append(RejectedSink(node: sink.name, rejection: .ignored(rule: rule)))
                    continue
                }
                setAside = .ignored(rule: rule)
            }
            var rank = SinkRank()
            if let entry = Self.entry(of: sink, context) {
                let configuration = entry.registration.configuration
                let identity = entry.registration.identity
                rank.accessory = identity
                if configuration.capabilities.contains(.audioSwitching) {
                    let primaryIsHost = configuration.primarySource.map(context.hostAddresses.contains) ?? false
                    let secondaryIsHost = configuration.secondarySource.map(context.hostAddresses.contains) ?? false
                    var rejection: Rejection?
                    if entry.timing.effective == .offHead {
                        rejection = .offHead(identity)
                    } else if configuration.hasSources, !primaryIsHost, !secondaryIsHost {
                        rejection = .otherHost(identity, primary: configuration.primarySource, secondary: configuration.secondarySource)
                    }
                    if let rejection {
                        guard slot == overrideSlot else {
                            rejected.append(RejectedSink(node: sink.name, rejection: rejection))
                            continue
                        }
                        setAside = setAside ?? rejection
                    }
                    if rejection == nil, entry.timing.isWorn, let placement = entry.timing.effective, let since = entry.timing.wornSince {
                        rank.worn = SinkRank.Worn(
                            since: since, placement: placement,
                            primarySource: primaryIsHost ? configuration.primarySource : nil,
                            paired: identity == context.pairedAccessory)
                    }
                } else if slot != overrideSlot {
                    rejected.append(RejectedSink(node: sink.name, rejection: .manualOnly(.registered(identity))))
                    continue
                }
            } else if let index = sink.staticAccessory, slot != overrideSlot,
                let capabilities = context.config.accessories[index].capabilities,
                !capabilities.contains(.audioSwitching)
            {
                rejected.append(RejectedSink(node: sink.name, rejection: .manualOnly(.configured(entry: index))))
                continue
            }
            // A virtual node only by the user's pick, their last choice, the one handed back to,
            // or a rule's priority (§1).
            if sink.isVirtual, slot != overrideSlot, slot != restoreSlot, slot != lastChoiceSlot {
                guard case .priority? = sink.rule else {
                    rejected.append(RejectedSink(node: sink.name, rejection: .virtual))
                    continue
                }
            }
            // A Bluetooth microphone kept for calls is ranked, to know where calls go, but is
            // never the default source; the user's pick still holds (§8).
            var callsOnly = false
            if let rule = context.callsOnly, slot != overrideSlot, let rejection = rule.rejection(of: sink) {
                rejected.append(RejectedSink(node: sink.name, rejection: rejection))
                guard case .callsOnly = rejection else { continue }
                callsOnly = true
                anyCallsOnly = true
            }
            rank.override = slot == overrideSlot
            rank.overridesRejection = setAside
            rank.restore = slot == restoreSlot
            rank.lastChoice = slot == lastChoiceSlot
            if sink.isPersonal { rank.arrivedAt = sink.arrivedAt }
            if case .priority(let rule)? = sink.rule { rank.rule = rule }
            rank.sinkClass = sink.sinkClass
            rank.classPlaces = sink.classPlaces
            rank.sessionPriority = sink.sessionPriority
            rank.routePriority = sink.routePriority
            rank.port = sink.routes?.activeLabel
            ranking.append(RankedSink(node: sink.name, id: sink.id, rank: rank))
            scratch.nameRanks.append(sink.nameRank)
            scratch.callsOnly.append(callsOnly)
        }

        var order = scratch.order
        var keys = scratch.keys
        scratch.order = []
        scratch.keys = []
        order.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        let tierOrder = context.config.tierOrder(for: direction)
        if scratch.tierOrder != tierOrder {
            scratch.tierOrder = tierOrder
            scratch.tiers = tierOrder.map(\.rule)
        }
        let tiers = scratch.tiers
        for (index, sink) in ranking.enumerated() {
            keys.append(RankingEntry(key: sink.rank.sortKey(order: tiers), nameRank: scratch.nameRanks[index], index: index))
            order.append(Int32(index))
        }
        // One pass over the words per comparison: the first that differs decides, else the name.
        keys.withUnsafeBufferPointer { keys in
            order.sort { a, b in
                let x = keys[Int(a)], y = keys[Int(b)]
                let compared = x.key.compare(y.key)
                return compared != 0 ? compared > 0 : x.nameRank < y.nameRank
            }
        }
        var result = Ranked(ranking: [], rejected: [])
        if anyCallsOnly {
            result.ranking.reserveCapacity(order.count)
            for index in order {
                if scratch.callsOnly[Int(index)] {
                    result.callsOnly.append(ranking[Int(index)])
                } else {
                    result.ranking.append(ranking[Int(index)])
                }
            }
        } else {
            result.ranking = order.map { ranking[Int($0)] }
        }
        scratch.candidates = ranking
        scratch.order = order
        scratch.keys = keys
        appendGone(to: &rejected, graph: context.graph)
        result.rejected = rejected
        return result
    }

    /// The registration `sink` belongs to: by its address or name, else (the input side) by its
    /// device. One lookup, its result moved out (a copy of the entry more per node was 4 % of a
    /// replay).
    @inline(__always)
    private static func entry(of sink: SinkFeatures, _ context: borrowing Context) -> AccessoryEntry? {
        if let entry = context.accessories.entry(address: sink.address, name: sink.name) { return entry }
        guard !context.accessoryOfDevice.isEmpty, let device = sink.deviceID, let identity = context.accessoryOfDevice[device] else { return nil }
        return context.accessories[identity]
    }

    /// The default and the override name nodes; when those are not in the graph, say so (a
    /// node of the graph this side does not rank, a sink's monitor as the default source, is
    /// not gone).
    private func appendGone(to rejected: inout [RejectedSink], graph: Graph) {
        for name in [currentDefault, userOverride].compactMap({ $0 }) where table.slot(named: name) == nil && !isForeign(name, in: graph) && graph.node(named: name) == nil {
            if !rejected.contains(where: { $0.node == name }) {
                rejected.append(RejectedSink(node: name, rejection: .gone))
            }
        }
    }
}
