import WireFields
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

    /// A jack or port event on a sink (headphones pulled from the jack, plugged back), when
    /// this decision's input was one (docs/policy.md §6).
    public var portEvent: PortEvent?
    /// The port the default sink plays to before and after (its active route), when its device
    /// says.
    public var previousPort: String?
    public var port: String? { ranking.first?.rank.port }

    /// Nodes that started flapping with this decision's input (§1 `settling`): said once, then
    /// held back.
    public var flapping: [FlappingNode] = []

    /// The input side (the default source, §8); nil when `[input] follow = "never"`.
    public var input: SourceDecision?
    /// The default source decided, when the input follows.
    public var defaultSource: String? { input?.defaultSource }
    /// Calls (§8 `bluetooth-microphone = "calls"`): where they record from, the capture
    /// streams pointed there and this decision's stream moves; nil when the rule is not
    /// `"calls"` (or the input does not follow) and nothing was pointed before.
    public var calls: CallRoutingOutcome?
    /// `earshot eval` only: what this decision's departure would pause and hold (§7); the
    /// engine leaves it nil (the daemon acts on the live players instead).
    public var playback: PlaybackPreview?

    public var changed: Bool { defaultSink != previous }

    /// The route changed: another sink, or a port event (a jack) on the sink that stays.
    public var routeChanged: Bool { changed || portEvent != nil }

    /// `2/5 sinks eligible: 2 off-head, 1 ignored`.
    public var summary: String { Self.summary(ranking: ranking, rejected: rejected, of: .output) }

    static func summary(ranking: [RankedSink], rejected: [RejectedSink], of direction: AudioDirection) -> String {
        let total = ranking.count + rejected.count
        var counts: [String: Int] = [:]
        for sink in rejected { counts[sink.rejection.kind, default: 0] += 1 }
        let parts = Rejection.kindOrder.compactMap { kind in counts[kind].map { "\($0) \(kind)" } }
        let head = "\(ranking.count)/\(total) \(direction.nodesNoun) eligible"
        return parts.isEmpty ? head : head + ": " + parts.joined(separator: ", ")
    }

    /// The sink's value in every tier where it has one, as named terms in the tier order of
    /// `direction` (a source's: the input's, §8).
    public func explanation(of sink: RankedSink, on direction: AudioDirection = .output) -> RankExplanation {
        RankExplainer(config: config, hostAddresses: hostAddresses, direction: direction).explain(sink)
    }

    /// The tier that put the winner above the runner-up; nil with fewer than two eligible sinks.
    public var decidedBy: DecidedBy? { decidedBy(in: ranking) }

    /// The tier that put the first of `ranking` above the second, in the tier order of
    /// `direction`, the side the ranking is of.
    public func decidedBy(in ranking: [RankedSink], on direction: AudioDirection = .output) -> DecidedBy? {
        guard ranking.count >= 2 else { return nil }
        return RankExplainer(config: config, hostAddresses: hostAddresses, direction: direction).decidedBy(ranking[0], over: ranking[1])
    }

    public func why(_ sink: RejectedSink) -> String {
        RankExplainer(config: config, hostAddresses: hostAddresses).why(sink.rejection)
    }
}

/// The input side of a decision (docs/policy.md §8): the default source and the whole why,
/// ranked by the same rules as the output.
public struct SourceDecision: Sendable, Hashable {
    /// The source's node.name, or nil when no source is eligible.
    public var defaultSource: String?
    public var previous: String?
    /// Set only when the default source changed (always for the initial decision).
    public var reason: RouteChangeReason?
    /// Eligible sources, best first.
    public var ranking: [RankedSink]
    public var rejected: [RejectedSink]
    /// A jack event on a source (a headset's microphone plugged or pulled).
    public var portEvent: PortEvent?
    /// The port the default source records from before and after, when its device says.
    public var previousPort: String?
    public var port: String? { ranking.first?.rank.port }

    public var changed: Bool { defaultSource != previous }
    public var routeChanged: Bool { changed || portEvent != nil }

    /// Whether the graph has any source for this side to speak of (eval's text leaves the
    /// input out for a graph without microphones).
    public var hasCandidates: Bool { !ranking.isEmpty || rejected.contains { $0.rejection != .gone } }

    /// `2/3 sources eligible: 1 off-head`.
    public var summary: String { Decision.summary(ranking: ranking, rejected: rejected, of: .input) }
}

/// A port of a sink became unavailable (headphones pulled from the jack, a monitor switched
/// off) or a personal port became available (headphones plugged in): a route change even when
/// the sink stays the default (docs/policy.md §6).
public struct PortEvent: WireRecord, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case unplugged, plugged
    }

    /// Open on the wire: a newer peer's kind is kept, not refused.
    public var kind: OpenEnum<Kind>
    /// The sink's node.name (on the input side, the source's).
    public var sink: String
    /// The port's description (`Headphones`), else its route name.
    public var port: String

    public init(kind: Kind, sink: String, port: String) {
        self.kind = OpenEnum(kind)
        self.sink = sink
        self.port = port
    }

    /// The route change's `port-event`, the decision record's and the input's.
    public static let wireFields: [WireField<PortEvent>] = [
        .field("kind", \.kind, "`unplugged` (the port went away: headphones pulled from the jack) or `plugged` (a headphones or headset port came)"),
        .field("sink", \.sink, "the sink's `node.name` (the source's, on the input side)"),
        .field("port", \.port, "the port's description (`Headphones`), else its route name"),
    ]
    public static let wireBlank = PortEvent(kind: .plugged, sink: "", port: "")

    public var reason: RouteChangeReason { kind == .unplugged ? .oldDeviceUnavailable : .newDeviceAvailable }
}
