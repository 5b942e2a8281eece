import WireFields
import AudioGraph

/// The routing policy as a value: inputs in, decisions out. Pure and single-threaded; time only
/// enters as the `at` of each input. Deciding is separate from applying.
public struct PolicyEngine: Sendable {
    public internal(set) var config: PolicyConfig
    public internal(set) var graph: Graph
    public internal(set) var accessories = AccessoryRegistry()
    /// The output: the sinks and everything remembered about the default sink.
    var output = EndpointSide(direction: .output)
    /// The input (§8): the sources and everything remembered about the default source. Kept
    /// up to date whatever `[input] follow` says; ranked only when it says to follow.
    var input = EndpointSide(direction: .input)

    /// The default as last decided (initially the graph's configured default).
    public internal(set) var currentDefault: String? {
        get { output.currentDefault }
        set { output.currentDefault = newValue }
    }
    /// The port the default plays to (its active route's label), when its device says.
    public var currentPort: String? { output.currentPort }
    /// A hand-picked default that holds until the next placement transition or sink arrival.
    public var userOverride: String? { output.userOverride }
    /// The user's most recent choice; outlives the override.
    public internal(set) var lastUserChoice: String? {
        get { output.lastUserChoice }
        set { output.lastUserChoice = newValue }
    }
    /// The sink a removed accessory gave the output back to; holds like an override.
    public var restoreHold: String? { output.restoreHold }
    /// For each worn accessory that took the output, the default it took it from.
    public internal(set) var restoreTargets: [AccessoryIdentity: String] {
        get { output.restoreTargets }
        set { output.restoreTargets = newValue }
    }

    /// The default source as last decided (initially the graph's configured default source).
    public internal(set) var currentSource: String? {
        get { input.currentDefault }
        set { input.currentDefault = newValue }
    }
    /// A hand-picked default source; holds until the next placement transition or source
    /// arrival.
    public var sourceOverride: String? { input.userOverride }
    /// The user's most recent choice of source; outlives the override.
    public internal(set) var lastSourceChoice: String? {
        get { input.lastUserChoice }
        set { input.lastUserChoice = newValue }
    }
    /// Whether the policy decides the default source (`[input] follow`).
    public var followsInput: Bool { config.input.follow != .never }
    /// The sinks, for tests and tools that look inside.
    var sinks: SinkTable { output.table }

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
    /// The last decision made, restated for inputs that cannot change it.
    var lastDecision: Decision?
    /// Nodes that started flapping during this input, said once in its decision.
    var pendingFlapping: [FlappingNode] = []
    /// The calls and the streams pointed at the call microphone (§8 `bluetooth-microphone`).
    var calls = CallRouting()
    /// Each capture stream's target as the calls want it (§8): what the daemon applies.
    public var streamTargets: StreamTargets { calls.targets }

    /// - Parameter hostAddresses: this host's Bluetooth adapters, added to the config's.
    public init(graph: Graph, config: PolicyConfig, hostAddresses: [BluetoothAddress] = []) {
        self.graph = graph
        self.config = config
        commandLineHostAddresses = hostAddresses.map { HostAddress($0, from: [.commandLine]) }
        refreshHostAddresses()
        output.currentDefault = graph.configuredDefaultSinkName ?? graph.effectiveDefaultSinkName
        output.lastUserChoice = graph.configuredDefaultSinkName
        input.currentDefault = graph.configuredDefaultSourceName ?? graph.effectiveDefaultSourceName
        input.lastUserChoice = graph.configuredDefaultSourceName
        rebuildSinks(arrivedAt: nil)
    }

    /// When the next placement transition is due, if any.
    public var nextDeadline: Milliseconds? {
        let placement = accessories.nextPending?.pending.due
        guard let settle = nextSettle else { return placement }
        return placement.map { min($0, settle) } ?? settle
    }

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
            case .decide(let trigger, let reason, let inputReason, let portEvent, let sourcePortEvent):
                decision = decide(trigger, reason: reason, inputReason: inputReason, at: now, portEvent: portEvent, sourcePortEvent: sourcePortEvent)
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
        case .userSelectedSource(let name): decision = userSelectedSource(name, at: now)
        case .timerFired: decision = fireTimer(at: now)
        case .configReplaced(let config): decision = replaceConfig(config, at: now)
        case .hostAddressesChanged(let learned): decision = replaceLearnedHostAddresses(learned, at: now)
        }
        var said = decision
        if !pendingFlapping.isEmpty {
            said.flapping = pendingFlapping
            pendingFlapping = []
        }
        return PolicyOutcome(decision: said, nextDeadline: nextDeadline, isUnchanged: false)
    }

    /// The last decision as this input would have made it: same ranking and default, nothing
    /// changed. Nil before the first decision (there is nothing to restate).
    private func restate(_ trigger: DecisionTrigger, at now: Milliseconds) -> Decision? {
        guard var decision = lastDecision, decision.defaultSink == currentDefault,
            decision.input?.defaultSource == (followsInput ? currentSource : nil)
        else { return nil }
        decision.at = now
        decision.trigger = trigger
        decision.previous = currentDefault
        decision.reason = nil
        decision.error = nil
        decision.portEvent = nil
        decision.previousPort = currentPort
        decision.calls?.moves = []
        if decision.calls?.isEmpty == true, config.input.bluetoothMicrophone != .calls || !followsInput { decision.calls = nil }
        if decision.input != nil {
            decision.input?.previous = currentSource
            decision.input?.reason = nil
            decision.input?.portEvent = nil
            decision.input?.previousPort = input.currentPort
        }
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
        output.select(name)
        return decide(.userSelected(name), reason: .userOverride, inputReason: nil, at: now)
    }

    private mutating func userSelectedSource(_ name: String, at now: Milliseconds) -> Decision {
        input.select(name)
        return decide(.userSelectedSource(name), reason: nil, inputReason: .userOverride, at: now)
    }

    private mutating func fireTimer(at now: Milliseconds) -> Decision {
        // Due first fires first; a settle and a placement due at once: the node settles first,
        // so the placement decides over it.
        if let settle = nextSettle, settle <= now, settle <= accessories.nextPending?.pending.due ?? settle {
            return settleArrivals(at: now)
        }
        guard let (identity, pending) = accessories.nextPending, pending.due <= now else {
            return decide(.nothingDue, reason: nil, at: now)
        }
        let step = accessories.modify(identity) { $0.timing.fire(at: now) } ?? PlacementStep.none
        if case .transition(let toWorn) = step { placementTransition(of: identity, toWorn: toWorn) }
        return decide(.timer(pending.kind, identity), reason: .placementChanged, at: now)
    }

    private mutating func replaceConfig(_ newConfig: PolicyConfig, at now: Milliseconds) -> Decision {
        config = newConfig
        calls.invalidate()
        refreshHostAddresses()
        let (graph, config) = (graph, config)
        forEachSide { side in
            let arrivals = Dictionary(side.table.features.map { ($0.id, $0.arrivedAt) }, uniquingKeysWith: { a, _ in a })
            side.rebuild(graph: graph, config: config) { arrivals[$0] ?? nil }
        }
        for identity in accessories.entries.keys.sorted() {
            guard let reporter = accessories[identity]?.registration.reporter,
                let entry = reporterRestriction(identity, reporter: reporter)
            else { continue }
            accessories.end(identity, because: "dropped by a config reload: \(entry.location?.fileLine ?? "the config") lets only \(entry.reporter ?? "?") report it")
            output.restoreTargets[identity] = nil
            input.restoreTargets[identity] = nil
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

    /// Ends the overrides and any restore hold; on coming off, hands the output and the input
    /// back (§4, §5, §8).
    mutating func placementTransition(of identity: AccessoryIdentity, toWorn: Bool) {
        placementTransitions += 1
        let devices = toWorn ? [:] : accessoryOfDevice()
        let restorePrevious = config.restorePrevious
        forEachSide { side in
            side.userOverride = nil
            side.restoreHold = nil
            guard !toWorn else { return }
            let target = side.restoreTargets.removeValue(forKey: identity)
            if restorePrevious, let target, let current = side.currentDefault,
                side.node(named: current, isOf: identity, accessoryOfDevice: devices)
            {
                side.restoreHold = target
            }
        }
    }

    /// Starting changes nothing (docs/policy.md §5): the default Earshot finds — the configured
    /// one if that sink exists, else the effective `default.audio.sink` (the session manager's
    /// choice when the user never picked one) — is the standing choice and holds as the override
    /// until the next placement transition, sink arrival or pick. (A restored registration that
    /// says "worn" would otherwise take the output from a default the user picked while the
    /// daemon was away.) A sink that cannot play (unplugged, §1) is not held. The default source
    /// is held the same way (§8).
    public mutating func holdCurrentDefault() {
        output.holdCurrentDefault(in: graph)
        input.holdCurrentDefault(in: graph)
        // A Bluetooth headset's input the rule keeps for calls (§8) is not held: WirePlumber 0.5
        // makes it the default itself (its priority is the highest), and held it would switch
        // the headset to hands-free for every recorder, the very thing the rule is for.
        if let found = input.foundDefault, let slot = input.table.slot(named: found), input.table[slot].bluetooth != nil,
            CallsOnlyInputs(rule: config.input.bluetoothMicrophone, handsFreeDevices: bluetoothProfiles().handsFree, heldForCalls: calls.heldForCalls)
                .rejection(of: input.table[slot]) != nil
        {
            input.userOverride = nil
            input.foundDefault = nil
        }
    }

    /// The default found at start or reconnect still holds as the decision: there is nothing
    /// to write for it (the daemon writes nothing until something happens).
    public var holdsFoundDefault: Bool { output.holdsFoundDefault }
    /// The same for the default source.
    public var holdsFoundSource: Bool { input.holdsFoundDefault }

    /// One side's choices, as the state file keeps them: the user's last pick and the pick
    /// that holds as the override now (the default found at start is not a pick of theirs).
    public func choices(of direction: AudioDirection) -> (lastChoice: String?, override: String?) {
        let side = direction == .output ? output : input
        let override = side.userOverride == side.foundDefault ? nil : side.userOverride
        return (side.lastUserChoice, override)
    }

    /// Choices saved before a restart, for a side the graph says nothing of (no configured
    /// default: standalone, or a session manager that kept none): the last choice comes back,
    /// and with `hold` (a plain restart: no transition since) a saved override holds again as
    /// the default found would, when its node is there.
    public mutating func restoreChoices(of direction: AudioDirection, lastChoice: String?, override: String?, hold: Bool) {
        guard EndpointSide.configured(direction, in: graph) == nil else { return }
        forEachSide { side in
            guard side.direction == direction else { return }
            if side.lastUserChoice == nil { side.lastUserChoice = lastChoice }
            if hold, let override, side.table.slot(named: override) != nil, side.userOverride == nil || side.userOverride == side.foundDefault {
                side.userOverride = override
                side.foundDefault = override
            }
        }
    }

    /// For each device with a sink that a registered accessory owns, that accessory: a source
    /// of the same device belongs to it (a USB headset registered by its sink's name). Empty
    /// while no accessory is known by node name (addresses match a source directly).
    func accessoryOfDevice() -> [ObjectID: AccessoryIdentity] {
        guard accessories.nameEntryCount > 0 else { return [:] }
        var result: [ObjectID: AccessoryIdentity] = [:]
        for sink in output.table.features {
            guard let device = sink.deviceID, let entry = accessories.entry(address: sink.address, name: sink.name) else { continue }
            result[device] = entry.registration.identity
        }
        return result
    }

    /// The `[[accessory]]` entry that reserves `identity` for a different reporter, if any.
    func reporterRestriction(_ identity: AccessoryIdentity, reporter: String) -> StaticAccessory? {
        config.accessories.first { entry in
            guard let only = entry.reporter else { return false }
            return only != reporter && entry.describes(identity)
        }
    }

    mutating func rebuildSinks(arrivedAt: Milliseconds?) {
        output.rebuild(graph: graph, config: config) { _ in arrivedAt }
        input.rebuild(graph: graph, config: config) { _ in arrivedAt }
    }

    // MARK: - Deciding

    /// Ranks the sinks (and the sources, when the input follows) and records the outcome as the
    /// current defaults. `reason` is the reason if the default sink changes, `inputReason` if
    /// the default source does; nil derives it from the graph (the old default gone or not).
    mutating func decide(
        _ trigger: DecisionTrigger, reason hint: RouteChangeReason?, at now: Milliseconds, error: AccessoryError? = nil
    ) -> Decision {
        decide(trigger, reason: hint, inputReason: hint, at: now, error: error)
    }

    /// `decide` with a reason of its own for the input side.
    mutating func decide(
        _ trigger: DecisionTrigger, reason hint: RouteChangeReason?, inputReason inputHint: RouteChangeReason?,
        at now: Milliseconds, error: AccessoryError? = nil, portEvent: PortEvent? = nil, sourcePortEvent: PortEvent? = nil
    ) -> Decision {
        var context = EndpointSide.Context(accessories: accessories, hostAddresses: hostAddresses, config: config, graph: graph)
        let out = output.decide(trigger, hint: hint, context: context, portEvent: portEvent)
        var decision = Decision(
            at: now, trigger: trigger, defaultSink: out.winner, previous: out.previous, reason: out.reason,
            ranking: out.ranking, rejected: out.rejected, error: error, config: config, hostAddresses: knownHostAddresses)
        decision.portEvent = portEvent
        decision.previousPort = out.previousPort
        if followsInput, input.table.count == 0, input.currentDefault == nil, input.userOverride == nil, input.restoreHold == nil {
            // No source and none named: nothing to rank (most graphs of sinks only).
            decision.input = SourceDecision(defaultSource: nil, previous: nil, reason: trigger == .initial ? .initial : nil, ranking: [], rejected: [])
            input.currentPort = nil
        } else if followsInput {
            context.accessoryOfDevice = accessoryOfDevice()
            // Paired with the output (§8): the worn headset the output goes to brings its microphone.
            if let winner = out.ranking.first, winner.rank.worn != nil { context.pairedAccessory = winner.rank.accessory }
            context.callsOnly = callsOnlyInputs()
            let side = input.decide(trigger, hint: inputHint, context: context, portEvent: sourcePortEvent)
            decision.input = SourceDecision(
                defaultSource: side.winner, previous: side.previous, reason: side.reason, ranking: side.ranking, rejected: side.rejected,
                portEvent: sourcePortEvent, previousPort: side.previousPort)
            if context.callsOnly?.rule == .calls {
                decision.calls = routeCalls(callSource: callSource(of: side, outputWinner: out.ranking.first))
            }
        }
        if decision.calls == nil, !calls.pointed.isEmpty {
            // Calls no longer go anywhere of their own (the config changed): every stream
            // pointed goes back to the default source.
            decision.calls = routeCalls(callSource: nil)
        }
        lastDecision = decision
        return decision
    }

    /// `[input] bluetooth-microphone` for the input's ranking (§8), with the headsets held for
    /// calls brought up to date; nil for `"always"`.
    private mutating func callsOnlyInputs() -> CallsOnlyInputs? {
        let rule = config.input.bluetoothMicrophone
        guard rule != .always else { return nil }
        guard rule == .calls else { return CallsOnlyInputs(rule: rule, handsFreeDevices: [], heldForCalls: []) }
        let (handsFree, music) = bluetoothProfiles()
        calls.scan(graph, config: config.input)
        if !handsFree.isEmpty || !music.isEmpty || !calls.heldForCalls.isEmpty {
            calls.noteProfiles(handsFree: handsFree, music: music, callRecording: calls.anyCall)
        }
        return CallsOnlyInputs(rule: rule, handsFreeDevices: handsFree, heldForCalls: calls.heldForCalls)
    }

    /// The Bluetooth devices with a node in a hands-free profile, and those with one in a music
    /// profile (a device that switches has both for a moment).
    private func bluetoothProfiles() -> (handsFree: Set<ObjectID>, music: Set<ObjectID>) {
        var handsFree: Set<ObjectID> = []
        var music: Set<ObjectID> = []
        func note(_ node: SinkFeatures) {
            guard let profile = node.bluetoothProfile, let device = node.deviceID else { return }
            if profile == .handsFree { handsFree.insert(device) } else { music.insert(device) }
        }
        for node in output.table.features { note(node) }
        for node in input.table.features { note(node) }
        return (handsFree, music)
    }

    /// Where calls record from (§8): the best Bluetooth microphone kept for calls, when it
    /// ranks above the default source (it would be the default were it not kept) and belongs
    /// to a worn headset or to the device the output plays to.
    private func callSource(of side: EndpointSide.Outcome, outputWinner: RankedSink?) -> String? {
        guard let best = side.callsOnly.first else { return nil }
        if let first = side.ranking.first {
            // The default found at start holds as an override but is nobody's pick: calls
            // compare with it as it ranks without the hold.
            var rival = first.rank
            if input.foundDefault != nil, first.node == input.foundDefault { rival.override = false }
            guard SinkRank.firstDifference(best.rank, rival, order: config.tierOrder(for: .input))?.order == .higher else { return nil }
        }
        if best.rank.worn != nil { return best.node }
        guard let winner = outputWinner, let sink = output.table.slot(id: winner.id), let slot = input.table.slot(id: best.id),
            let device = input.table[slot].deviceID, output.table[sink].deviceID == device
        else { return nil }
        return best.node
    }

    private mutating func routeCalls(callSource: String?) -> CallRoutingOutcome {
        calls.scan(graph, config: config.input)
        let (held, table) = (calls.heldForCalls, input.table)
        return calls.decide(graph: graph, config: config.input, callSource: callSource) { name in
            guard let slot = table.slot(named: name) else { return false }
            switch table[slot].bluetooth {
            case .profileSwitching?: return true
            case .handsFree?: return table[slot].deviceID.map(held.contains) == true
            default: return false
            }
        }
    }
}
