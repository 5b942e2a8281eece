/// Buffers the ranking reuses between decisions, so scoring allocates only its results.
struct RankingScratch: Sendable, Hashable {
    /// (time, index into the ranking) of worn accessories and of arrived personal sinks.
    var worn: [RecencyEntry] = []
    var arrived: [RecencyEntry] = []
    /// Eligible sinks in table order, before sorting, and their name ranks.
    var candidates: [RankedSink] = []
    var nameRanks: [Int32] = []
    /// (total, index into candidates): sorting these small keys is much cheaper than moving
    /// whole ranked sinks around.
    var order: [RankingKey] = []
}

struct RankingKey: Sendable, Hashable {
    var total: Int64
    var nameRank: Int32
    var index: Int32
}

struct RecencyEntry: Sendable, Hashable {
    var time: Milliseconds
    var index: Int
}

/// Recency ranks stop at this depth so a weight times a rank cannot overflow.
let maximumRecencyRank: Int32 = 100

/// Eligibility (§1) and ranking (§2): one pass over the sink table, then recency ranks, then a
/// sort by total score with the node name as the stable tie-break.
extension PolicyEngine {
    mutating func rank() -> ([RankedSink], [RejectedSink]) {
        sinks.rankNames()
        let weights = config.weights
        let overrideSlot = userOverride.flatMap { sinks.slot(named: $0) } ?? -1
        let restoreSlot = restoreHold.flatMap { sinks.slot(named: $0) } ?? -1
        let lastChoiceSlot = lastUserChoice.flatMap { sinks.slot(named: $0) } ?? -1
        var ranking = scratch.candidates
        scratch.candidates = []
        ranking.removeAll(keepingCapacity: true)
        var rejected: [RejectedSink] = []
        scratch.worn.removeAll(keepingCapacity: true)
        scratch.arrived.removeAll(keepingCapacity: true)
        scratch.nameRanks.removeAll(keepingCapacity: true)

        for slot in 0..<sinks.count {
            let sink = sinks[slot]
            if sink.ignored {
                rejected.append(RejectedSink(node: sink.name, rejection: .ignored(rule: Int(sink.ruleIndex))))
                continue
            }
            var score = ScoreBreakdown()
            if let entry = accessories.entry(address: sink.address, name: sink.name) {
                let configuration = entry.registration.configuration
                let identity = entry.registration.identity
                score.accessory = identity
                if configuration.capabilities.contains(.audioSwitching) {
                    if entry.timing.effective == .offHead {
                        rejected.append(RejectedSink(node: sink.name, rejection: .offHead(identity)))
                        continue
                    }
                    let primaryIsHost = configuration.primarySource.map(hostAddresses.contains) ?? false
                    let secondaryIsHost = configuration.secondarySource.map(hostAddresses.contains) ?? false
                    if configuration.hasSources, !primaryIsHost, !secondaryIsHost {
                        rejected.append(RejectedSink(
                            node: sink.name,
                            rejection: .otherHost(identity, primary: configuration.primarySource, secondary: configuration.secondarySource)))
                        continue
                    }
                    if entry.timing.isWorn {
                        score.placement = entry.timing.effective
                        score.wornSince = entry.timing.wornSince
                        scratch.worn.append(RecencyEntry(time: entry.timing.wornSince ?? 0, index: ranking.count))
                        if primaryIsHost {
                            score.primarySource = weights.primarySource
                            score.primarySourceAddress = configuration.primarySource
                        }
                    }
                } else if slot != overrideSlot {
                    rejected.append(RejectedSink(node: sink.name, rejection: .manualOnly(identity, staticEntry: -1)))
                    continue
                }
            } else if sink.staticAccessory >= 0, slot != overrideSlot,
                let capabilities = config.accessories[Int(sink.staticAccessory)].capabilities,
                !capabilities.contains(.audioSwitching)
            {
                rejected.append(RejectedSink(node: sink.name, rejection: .manualOnly(nil, staticEntry: Int(sink.staticAccessory))))
                continue
            }
            if slot == overrideSlot { score.userOverride = weights.userOverride }
            if slot == restoreSlot { score.restorePrevious = weights.restorePrevious }
            if slot == lastChoiceSlot { score.lastChoice = weights.lastChoice }
            if sink.isPersonal, let arrivedAt = sink.arrivedAt {
                score.arrivedAt = arrivedAt
                scratch.arrived.append(RecencyEntry(time: arrivedAt, index: ranking.count))
            }
            if sink.ruleIndex >= 0 {
                score.ruleIndex = sink.ruleIndex
                score.priority = sink.priority
                score.rulePriority = Int64(sink.priority) * weights.rulePriority
            }
            score.sinkClass = sink.sinkClass
            score.classPlaces = sink.classPlaces
            score.classOrder = Int64(sink.classPlaces) * weights.classOrder
            ranking.append(RankedSink(node: sink.name, id: sink.id, score: score, total: 0))
            scratch.nameRanks.append(sink.nameRank)
        }

        Self.assignRecency(&scratch.worn) { index, rank, of in
            ranking[index].score.wornRank = rank
            ranking[index].score.wornOf = of
            ranking[index].score.worn = Int64(rank) * weights.worn
        }
        Self.assignRecency(&scratch.arrived) { index, rank, of in
            ranking[index].score.arrivalRank = rank
            ranking[index].score.arrivalOf = of
            ranking[index].score.arrival = Int64(rank) * weights.arrival
        }
        var order = scratch.order
        scratch.order = []
        order.removeAll(keepingCapacity: true)
        for index in ranking.indices {
            let total = ranking[index].score.total
            ranking[index].total = total
            order.append(RankingKey(total: total, nameRank: scratch.nameRanks[index], index: Int32(index)))
        }
        order.sort { a, b in a.total != b.total ? a.total > b.total : a.nameRank < b.nameRank }
        let sorted = order.map { ranking[Int($0.index)] }
        scratch.candidates = ranking
        scratch.order = order
        appendGone(to: &rejected)
        return (sorted, rejected)
    }

    /// Ranks by time, oldest 1 and most recent highest; equal times share a rank so the next
    /// rule decides between them.
    private static func assignRecency(_ entries: inout [RecencyEntry], _ assign: (Int, Int32, Int32) -> Void) {
        guard !entries.isEmpty else { return }
        entries.sort { $0.time < $1.time }
        var distinct: Int32 = 0
        var last: Milliseconds?
        for entry in entries where entry.time != last {
            distinct += 1
            last = entry.time
        }
        let skipped = max(0, distinct - maximumRecencyRank)
        var ordinal: Int32 = 0
        last = nil
        for entry in entries {
            if entry.time != last {
                ordinal += 1
                last = entry.time
            }
            assign(entry.index, max(1, ordinal - skipped), min(distinct, maximumRecencyRank))
        }
    }

    /// The default and the override name sinks; when those are not in the graph, say so.
    private func appendGone(to rejected: inout [RejectedSink]) {
        for name in [currentDefault, userOverride].compactMap({ $0 }) where sinks.slot(named: name) == nil {
            if !rejected.contains(where: { $0.node == name }) {
                rejected.append(RejectedSink(node: name, rejection: .gone))
            }
        }
    }
}
