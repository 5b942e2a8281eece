import AudioGraph

/// The routing policy as a value: inputs in, decisions out. Pure and single-threaded; time only
/// enters as the `at` of each input. Deciding is separate from applying.
public struct PolicyEngine: Sendable {
    public internal(set) var config: PolicyConfig
    public internal(set) var graph: Graph
    public internal(set) var accessories = AccessoryRegistry()
    /// The default as last decided (initially the graph's configured default).
    public internal(set) var currentDefault: String?
    /// The default `holdCurrentDefault()` found and holds (nil once a pick replaced it).
    private var foundDefault: String?
    /// The port the default plays to (its active route's label), when its device says.
    public internal(set) var currentPort: String?
    /// A hand-picked default that holds until the next placement transition or sink arrival.
    public internal(set) var userOverride: String?
    /// The user's most recent choice; outlives the override.
    public internal(set) var lastUserChoice: String?
    /// The sink a removed accessory gave the output back to; holds like an override.
    public internal(set) var restoreHold: String?
    /// For each worn accessory that took the output, the default it took it from.
    public internal(set) var restoreTargets: [AccessoryIdentity: String] = [:]
    /// This host's Bluetooth addresses, for scoring: `knownHostAddresses` without origins.
    public internal(set) var hostAddresses: [BluetoothAddress] = []
    /// This host's addresses with where each came from: the config's, then the command line's,
    /// then the learnt ones.
    public internal(set) var knownHostAddresses: [HostAddress] = []
    /// Addresses learnt while running (BlueZ's adapters), as the last `.hostAddressesChanged` said.
    public internal(set) var learnedHostAddresses: [HostAddress] = []
    private let commandLineHostAddresses: [HostAddress]
    /// How many placement transitions this engine has seen (the daemon asks whether one
    /// happened between restoring its state and its first graph).
    public private(set) var placementTransitions = 0
    var sinks = SinkTable()
    var scratch = RankingScratch()
    /// The last decision made, restated for inputs that cannot change it.
    var lastDecision: Decision?

    /// - Parameter hostAddresses: this host's Bluetooth adapters, added to the config's.
    public init(graph: Graph, config: PolicyConfig, hostAddresses: [BluetoothAddress] = []) {
        self.graph = graph
        self.config = config
        commandLineHostAddresses = hostAddresses.map { HostAddress($0, from: [.commandLine]) }
        refreshHostAddresses()
        currentDefault = graph.configuredDefaultSinkName ?? graph.effectiveDefaultSinkName
        lastUserChoice = graph.configuredDefaultSinkName
        rebuildSinks(arrivedAt: nil)
    }

    /// When the next placement transition is due, if any.
    public var nextDeadline: Milliseconds? { accessories.nextPending?.pending.due }

    /// The `current` operation of the accessory API.
    public func current(_ identity: AccessoryIdentity) -> Result<AccessoryConfiguration, AccessoryError> {
        accessories.current(identity)
    }

    /// Takes one input, the only door for graph changes, accessory requests, picks, timers,
    /// config and host addresses. An input that cannot affect a decision (a port, link or client
    /// event; metadata other than the default sink keys; a node or device change that touches
    /// nothing ranking reads) is taken without ranking: the outcome is `isUnchanged` and carries
    /// the last decision restated for this input.
    public mutating func handle(_ input: PolicyInput, at now: Milliseconds) -> PolicyOutcome {
        let decision: Decision
        switch input {
        case .start: decision = decide(.initial, reason: .initial, at: now)
        case .graphChanged(let change):
            switch applyGraphChange(change, at: now) {
            case .decide(let trigger, let reason, let portEvent): decision = decide(trigger, reason: reason, at: now, portEvent: portEvent)
            case .unchanged(let trigger):
                guard let restated = restate(trigger, at: now) else {
                    decision = decide(trigger, reason: nil, at: now)
                    break
                }
                return PolicyOutcome(decision: restated, nextDeadline: nextDeadline, isUnchanged: true)
            }
        case .graphReplaced(let graph): decision = replaceGraph(graph, at: now)
        case .accessory(let request): decision = applyAccessory(request, at: now)
        case .userSelectedDefault(let name): decision = userSelected(name, at: now)
        case .timerFired: decision = fireTimer(at: now)
        case .configReplaced(let config): decision = replaceConfig(config, at: now)
        case .hostAddressesChanged(let learned): decision = replaceLearnedHostAddresses(learned, at: now)
        }
        return PolicyOutcome(decision: decision, nextDeadline: nextDeadline, isUnchanged: false)
    }

    /// The last decision as this input would have made it: same ranking and default, nothing
    /// changed. Nil before the first decision (there is nothing to restate).
    private func restate(_ trigger: DecisionTrigger, at now: Milliseconds) -> Decision? {
        guard var decision = lastDecision, decision.defaultSink == currentDefault else { return nil }
        decision.at = now
        decision.trigger = trigger
        decision.previous = currentDefault
        decision.reason = nil
        decision.error = nil
        decision.portEvent = nil
        decision.previousPort = currentPort
        return decision
    }

    /// A decision that only reports a request refused before it reached the engine (a malformed
    /// accessory request): nothing changes.
    public mutating func refused(_ error: AccessoryError, verb: String, subject: String, at now: Milliseconds) -> PolicyOutcome {
        PolicyOutcome(
            decision: decide(.refused(verb: verb, subject: subject), reason: nil, at: now, error: error), nextDeadline: nextDeadline, isUnchanged: false)
    }

    // MARK: - Inputs

    private mutating func userSelected(_ name: String, at now: Milliseconds) -> Decision {
        foundDefault = nil
        userOverride = name
        lastUserChoice = name
        restoreHold = nil
        return decide(.userSelected(name), reason: .userOverride, at: now)
    }

    private mutating func fireTimer(at now: Milliseconds) -> Decision {
        guard let (identity, pending) = accessories.nextPending, pending.due <= now else {
            return decide(.nothingDue, reason: nil, at: now)
        }
        let step = accessories.modify(identity) { $0.timing.fire(at: now) } ?? PlacementStep.none
        if case .transition(let toWorn) = step { placementTransition(of: identity, toWorn: toWorn) }
        return decide(.timer(pending.kind, identity), reason: .placementChanged, at: now)
    }

    private mutating func replaceConfig(_ newConfig: PolicyConfig, at now: Milliseconds) -> Decision {
        config = newConfig
        refreshHostAddresses()
        let arrivals = Dictionary(sinks.features.map { ($0.id, $0.arrivedAt) }, uniquingKeysWith: { a, _ in a })
        sinks = SinkTable()
        for node in graph.nodes.values {
            if let sink = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivals[node.id] ?? nil) { sinks.upsert(sink) }
        }
        for identity in accessories.entries.keys.sorted() {
            guard let reporter = accessories[identity]?.registration.reporter,
                let entry = reporterRestriction(identity, reporter: reporter)
            else { continue }
            accessories.end(identity, because: "dropped by a config reload: \(entry.location?.fileLine ?? "the config") lets only \(entry.reporter ?? "?") report it")
            restoreTargets[identity] = nil
        }
        return decide(.configReplaced, reason: .configChanged, at: now)
    }

    /// Another host address may make an accessory eligible or rule it out (§1), and a primary
    /// source that is now this host ranks higher (§2.2): decided like a change of its sources.
    private mutating func replaceLearnedHostAddresses(_ learned: [HostAddress], at now: Milliseconds) -> Decision {
        learnedHostAddresses = learned
        refreshHostAddresses()
        return decide(.hostAddressesChanged, reason: .sourceChanged, at: now)
    }

    private mutating func refreshHostAddresses() {
        let fromConfig = config.hostAddresses.map { HostAddress($0, from: [.config]) }
        knownHostAddresses = HostAddress.merge(fromConfig, commandLineHostAddresses, learnedHostAddresses)
        hostAddresses = knownHostAddresses.map(\.address)
    }

    /// Ends the override and any restore hold; on coming off, hands the output back (§4, §5).
    mutating func placementTransition(of identity: AccessoryIdentity, toWorn: Bool) {
        placementTransitions += 1
        userOverride = nil
        restoreHold = nil
        guard !toWorn else { return }
        let target = restoreTargets.removeValue(forKey: identity)
        if config.restorePrevious, let target, let current = currentDefault, sink(named: current, isOf: identity) {
            restoreHold = target
        }
    }

    /// Starting changes nothing (docs/policy.md §5): the default Earshot finds — the configured
    /// one if that sink exists, else the effective `default.audio.sink` (the session manager's
    /// choice when the user never picked one) — is the standing choice and holds as the override
    /// until the next placement transition, sink arrival or pick. (A restored registration that
    /// says "worn" would otherwise take the output from a default the user picked while the
    /// daemon was away.) A sink that cannot play (unplugged, §1) is not held.
    public mutating func holdCurrentDefault() {
        let configured = graph.configuredDefaultSinkName.flatMap { sinks.slot(named: $0) != nil ? $0 : nil }
        guard let name = configured ?? graph.effectiveDefaultSinkName, sinks.slot(named: name) != nil else { return }
        userOverride = name
        foundDefault = name
    }

    /// The default found at start or reconnect still holds as the decision: there is nothing
    /// to write for it (the daemon writes nothing until something happens).
    public var holdsFoundDefault: Bool { foundDefault != nil && userOverride == foundDefault && currentDefault == foundDefault }


    /// A new sink ends the override (§5) and any restore hold.
    mutating func sinkArrived() {
        userOverride = nil
        restoreHold = nil
    }

    func sink(named name: String, isOf identity: AccessoryIdentity) -> Bool {
        guard let slot = sinks.slot(named: name) else { return false }
        switch identity {
        case .address(let address): return sinks[slot].address == address
        case .nodeName(let nodeName): return name == nodeName
        }
    }

    /// The `[[accessory]]` entry that reserves `identity` for a different reporter, if any.
    func reporterRestriction(_ identity: AccessoryIdentity, reporter: String) -> StaticAccessory? {
        config.accessories.first { entry in
            guard let only = entry.reporter else { return false }
            return only != reporter && entry.describes(identity)
        }
    }

    mutating func rebuildSinks(arrivedAt: Milliseconds?) {
        sinks = SinkTable()
        for node in graph.nodes.values {
            if let sink = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivedAt) { sinks.upsert(sink) }
        }
    }

    // MARK: - Deciding

    /// Ranks the sinks and records the outcome as the current default. `reason` is the reason
    /// if the default changes; nil derives it from the graph (the old default gone or not).
    mutating func decide(
        _ trigger: DecisionTrigger, reason hint: RouteChangeReason?, at now: Milliseconds, error: AccessoryError? = nil,
        portEvent: PortEvent? = nil
    ) -> Decision {
        // A pick (or a hand-back) on a sink that was unplugged ends as a gone one does (§5).
        for name in [userOverride, restoreHold].compactMap({ $0 }) {
            guard let slot = sinks.slot(named: name), sinks[slot].routes?.isAvailable == false else { continue }
            if userOverride == name { userOverride = nil }
            if restoreHold == name { restoreHold = nil }
        }
        let (ranking, rejected) = rank()
        let previous = currentDefault
        let winner = ranking.first
        var decision = Decision(
            at: now, trigger: trigger, defaultSink: winner?.node, previous: previous, reason: nil,
            ranking: ranking, rejected: rejected, error: error, config: config, hostAddresses: knownHostAddresses)
        decision.portEvent = portEvent
        decision.previousPort = currentPort
        if trigger == .initial {
            decision.reason = .initial
        } else if decision.changed {
            if winner == nil {
                decision.reason = .noSuitableRoute
            } else if let hint {
                decision.reason = hint
            } else {
                let previousStillThere = previous.map { name in ranking.contains { $0.node == name } } ?? false
                decision.reason = previousStillThere || previous == nil ? .newDeviceAvailable : .oldDeviceUnavailable
            }
            // The jack that moved it says why, whatever else the input did.
            if let portEvent, portEvent.kind == .unplugged, portEvent.sink == previous { decision.reason = .oldDeviceUnavailable }
        } else if let portEvent {
            decision.reason = portEvent.reason
        }
        // Remember what a worn accessory took the output from, to hand it back (§4).
        if decision.changed, let winner, winner.rank.worn != nil, let identity = winner.rank.accessory, let previous {
            restoreTargets[identity] = previous
        }
        currentDefault = winner?.node
        currentPort = winner?.rank.port
        lastDecision = decision
        return decision
    }
}
