/// One tier's value for a sink, as a named term: the tier, its value in words, and the rule
/// (docs/policy.md §, or the config file:line of a `[[rule]]`) that produced it.
public struct RankTerm: Sendable, Hashable {
    public var tier: RankTier
    /// `put on 5000 ms, primary source`, `priority 10`, `headphones (7 of 7)`.
    public var value: String
    /// `§2.2 accessory AA:BB:CC:DD:EE:FF is on-head since 5000 ms; …`.
    public var why: String

    public init(tier: RankTier, value: String, why: String) {
        self.tier = tier
        self.value = value
        self.why = why
    }
}

/// A sink's rank in words: a term for every tier in which it has a value, in tier order.
public struct RankExplanation: Sendable, Hashable {
    public var node: String
    public var terms: [RankTerm]
}

/// Which tier separated the winner from the runner-up, and how.
public struct DecidedBy: Sendable, Hashable {
    /// The first tier of the side's `tier-order` where the two differ; nil when they are equal in every
    /// tier and the node name decided (docs/policy.md §2).
    public var tier: RankTier?
    public var runnerUp: String
    /// `beats bluez_output.X at worn (put on 5000 ms vs 1200 ms)`.
    public var why: String

    public init(tier: RankTier?, runnerUp: String, why: String) {
        self.tier = tier
        self.runnerUp = runnerUp
        self.why = why
    }

    /// The tier's name, or `name` for the tie-break.
    public var tierName: String { tier?.rawValue ?? "name" }
}

/// Turns ranks and rejections into named terms and sentences. Runs only when a decision is
/// shown, never in the ranking loop.
struct RankExplainer {
    let config: PolicyConfig
    let hostAddresses: [HostAddress]
    /// The side whose ranking is explained: its tier order (§8 `[input] tier-order`).
    var direction: AudioDirection = .output

    private var tierOrder: [RankTier] { config.tierOrder(for: direction) }

    func explain(_ sink: RankedSink) -> RankExplanation {
        RankExplanation(node: sink.node, terms: tierOrder.compactMap { term(sink.rank, $0) })
    }

    /// The term of one tier, or nil when the sink has no value there (not worn, no rule…).
    func term(_ rank: SinkRank, _ tier: RankTier) -> RankTerm? {
        let rule = tier.rule
        guard let value = rule.value(rank, self), let why = rule.why(rank, self) else { return nil }
        return RankTerm(tier: tier, value: value, why: why)
    }

    /// What the winner has at the deciding tier against what the runner-up has there.
    func decidedBy(_ winner: RankedSink, over runnerUp: RankedSink) -> DecidedBy {
        guard let (tier, _) = SinkRank.firstDifference(winner.rank, runnerUp.rank, order: tierOrder) else {
            return DecidedBy(
                tier: nil, runnerUp: runnerUp.node,
                why: "beats \(runnerUp.node) at name (equal in every tier; \"\(winner.node)\" sorts before \"\(runnerUp.node)\")")
        }
        let (mine, theirs) = contrast(winner.rank, runnerUp.rank, at: tier)
        return DecidedBy(tier: tier, runnerUp: runnerUp.node, why: "beats \(runnerUp.node) at \(tier) (\(mine) vs \(theirs))")
    }

    private func contrast(_ a: SinkRank, _ b: SinkRank, at tier: RankTier) -> (String, String) {
        tier.rule.contrast(a, b)
    }

    func why(_ rejection: Rejection) -> String {
        switch rejection {
        case .ignored(let index):
            let rule = config.rules[index]
            return "§1 ignored by the rule at \(rule.location?.fileLine ?? "built-in") (\(rule.matchDescription))"
        case .offHead(let identity):
            return "§1 accessory \(identity) has audio-switching and is off-head"
        case .otherHost(let identity, let primary, let secondary):
            let sources = [primary.map { "primary \($0)" }, secondary.map { "secondary \($0)" }].compactMap { $0 }.joined(separator: ", ")
            let hosts = hostAddresses.isEmpty
                ? "no host address is known: set host-addresses, pass --host-address, or let the daemon read BlueZ's adapters"
                : "this host is \(hostAddresses.map(\.description).joined(separator: ", "))"
            return "§1 accessory \(identity) is playing for another host (\(sources); \(hosts))"
        case .manualOnly(.registered(let identity)):
            return "§1 accessory \(identity) has no audio-switching: only the user chooses it"
        case .manualOnly(.configured(let entry)):
            return "§1 static accessory at \(config.accessories[entry].location?.fileLine ?? "built-in") has no audio-switching: only the user chooses it"
        case .gone:
            return "§1 gone: no such sink in the graph"
        case .unavailable(let port):
            return "§1 unavailable: port \"\(port)\" is unplugged (every route of its device for it is available: no)"
        case .noPorts:
            return "§1 no input ports (yet): it cannot take audio until they appear"
        case .settling(let until, let flapping):
            return flapping
                ? "§1 settling: it keeps coming and going (\(ArrivalGuard.flapArrivals) arrivals within \(ArrivalGuard.flapWindow / 1000) s), held back until it stays \(config.flapHold) ms (from \(until) ms if it stays)"
                : "§1 settling: it arrived less than \(config.arrivalSettle) ms ago and takes part from \(until) ms if it stays"
        case .callsOnly(let handsFree):
            return handsFree
                ? "§8 keeps A2DP: calls only (bluetooth-microphone = \"calls\"): the headset is in the hands-free profile for a call; calls record from it, the default source stays another microphone"
                : "§8 keeps A2DP: calls only (bluetooth-microphone = \"calls\"): recording from it would switch the headset to the 16 kHz hands-free profile; only calls are pointed at it"
        case .bluetoothNever:
            return "§8 a Bluetooth microphone, and bluetooth-microphone = \"never\": only the user chooses it"
        case .virtual:
            return "§1 virtual (a null or filter sink of no hardware): only the user or a [[rule]] with a priority chooses it"
        }
    }

    /// `11:22:33:44:55:66 (bluez hci0)`: the address with where the policy learnt it is this host's.
    func hostAddressWithOrigin(_ address: BluetoothAddress) -> String {
        hostAddresses.first { $0.address == address }?.description ?? address.description
    }
}
