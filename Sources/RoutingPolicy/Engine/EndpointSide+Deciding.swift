import WireFields
import AudioGraph

extension EndpointSide {
    /// One side's half of a decision.
    struct Outcome {
        var winner: String?
        var previous: String?
        var reason: RouteChangeReason?
        var ranking: [RankedSink]
        var rejected: [RejectedSink]
        var previousPort: String?
        /// The input: the Bluetooth microphones kept for calls, best first (§8).
        var callsOnly: [RankedSink] = []
    }

    /// Ranks this side and records the winner as its current default.
    mutating func decide(_ trigger: DecisionTrigger, hint: RouteChangeReason?, context: borrowing Context, portEvent: PortEvent?) -> Outcome {
        dropUnavailableHolds()
        let ranked = rank(context)
        let (ranking, rejected) = (ranked.ranking, ranked.rejected)
        let previous = currentDefault
        let winner = ranking.first
        // A default this side does not rank but the graph has (a sink's monitor as the default
        // source): picked by the user or found at start, it holds as any pick does; as the
        // user's last choice it competes at that tier (§2.5) with the winner; the one there when
        // nothing is eligible stays. It is theirs, never fought.
        let graph = context.graph
        let held = foreign(userOverride, in: graph)
            ?? foreign(lastUserChoice, in: graph).flatMap { name in winner.map { Self.lastChoiceBeats($0.rank, config: context.config, on: direction) } ?? true ? name : nil }
            ?? (winner == nil ? foreign(previous, in: graph) : nil)
        if let held {
            let changed = held != previous
            let previousPort = currentPort
            currentDefault = held
            currentPort = nil
            let reason: RouteChangeReason? = trigger == .initial ? .initial : (changed ? hint ?? .newDeviceAvailable : nil)
            return Outcome(
                winner: held, previous: previous, reason: reason, ranking: ranking, rejected: rejected, previousPort: previousPort,
                callsOnly: ranked.callsOnly)
        }
        let changed = winner?.node != previous
        var reason: RouteChangeReason?
        if trigger == .initial {
            reason = .initial
        } else if changed {
            if winner == nil {
                reason = .noSuitableRoute
            } else if let hint {
                reason = hint
            } else {
                let previousStillThere = previous.map { name in ranking.contains { $0.node == name } } ?? false
                reason = previousStillThere || previous == nil ? .newDeviceAvailable : .oldDeviceUnavailable
            }
            // The jack that moved it says why, whatever else the input did.
            if let portEvent, portEvent.kind == .unplugged, portEvent.sink == previous { reason = .oldDeviceUnavailable }
        } else if let portEvent {
            reason = portEvent.reason
        }
        // Remember what a worn accessory took this side from, to hand it back (§4).
        if changed, let winner, winner.rank.worn != nil, let identity = winner.rank.accessory, let previous {
            restoreTargets[identity] = previous
        }
        let previousPort = currentPort
        currentDefault = winner?.node
        currentPort = winner?.rank.port
        return Outcome(
            winner: winner?.node, previous: previous, reason: reason, ranking: ranking, rejected: rejected, previousPort: previousPort,
            callsOnly: ranked.callsOnly)
    }

    /// `name` when it names a node this side does not rank but may hold (`isForeign`).
    private func foreign(_ name: String?, in graph: Graph) -> String? {
        guard let name, table.slot(named: name) == nil, isForeign(name, in: graph) else { return nil }
        return name
    }

    /// Whether a node known only as the user's last choice (§2.5), with no other tier value,
    /// ranks above `rank` in the side's tier order.
    static func lastChoiceBeats(_ rank: SinkRank, config: PolicyConfig, on direction: AudioDirection) -> Bool {
        var choice = SinkRank()
        choice.lastChoice = true
        choice.sinkClass = .other
        choice.classPlaces = config.classOrder.firstIndex(of: .other).map { config.classOrder.count - $0 } ?? 0
        return SinkRank.firstDifference(choice, rank, order: config.tierOrder(for: direction))?.order == .higher
    }

    /// Whether the node `name` of this side belongs to the accessory `identity`.
    func node(named name: String, isOf identity: AccessoryIdentity, accessoryOfDevice: [ObjectID: AccessoryIdentity]) -> Bool {
        guard let slot = table.slot(named: name) else { return false }
        switch identity {
        case .address(let address): return table[slot].address == address
        case .nodeName(let nodeName):
            if name == nodeName { return true }
            return table[slot].deviceID.map { accessoryOfDevice[$0] == identity } ?? false
        }
    }
}
