/// What the policy decided after one input: the default sink and the whole why. Deciding is
/// separate from applying: the daemon writes `defaultSink` only when `changed`.
public struct Decision: Sendable, Hashable {
    public var at: Milliseconds
    public var trigger: DecisionTrigger
    /// The sink's node.name, or nil when no sink is eligible.
    public var defaultSink: String?
    public var previous: String?
    /// Set only when the default changed (always for the initial decision).
    public var reason: RouteChangeReason?
    /// Eligible sinks, best first.
    public var ranking: [RankedSink]
    public var rejected: [RejectedSink]
    /// A refused accessory request; the decision then changed nothing.
    public var error: AccessoryError?
    /// The config the ranks came from, for rule locations and the tier order in explanations.
    public var config: PolicyConfig
    /// This host's Bluetooth addresses as the policy knew them, with where each came from.
    public var hostAddresses: [HostAddress]

    public var changed: Bool { defaultSink != previous }

    /// `2/5 sinks eligible: 2 off-head, 1 ignored`.
    public var summary: String {
        let total = ranking.count + rejected.count
        var counts: [String: Int] = [:]
        for sink in rejected { counts[sink.rejection.kind, default: 0] += 1 }
        let parts = Rejection.kindOrder.compactMap { kind in counts[kind].map { "\($0) \(kind)" } }
        let head = "\(ranking.count)/\(total) sinks eligible"
        return parts.isEmpty ? head : head + ": " + parts.joined(separator: ", ")
    }

    /// The sink's value in every tier where it has one, as named terms in tier order.
    public func explanation(of sink: RankedSink) -> RankExplanation {
        RankExplainer(config: config, hostAddresses: hostAddresses).explain(sink)
    }

    /// The tier that put the winner above the runner-up; nil with fewer than two eligible sinks.
    public var decidedBy: DecidedBy? {
        guard ranking.count >= 2 else { return nil }
        return RankExplainer(config: config, hostAddresses: hostAddresses).decidedBy(ranking[0], over: ranking[1])
    }

    public func why(_ sink: RejectedSink) -> String {
        RankExplainer(config: config, hostAddresses: hostAddresses).why(sink.rejection)
    }
}
