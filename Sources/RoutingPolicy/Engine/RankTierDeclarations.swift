/// Each tier, declared once, as a type of its own: how two ranks compare at it, how it packs
/// into a sort key (in the same order as `compare`), its value and reason in an explanation,
/// and what the winner and the runner-up had there. Adding a tier is one more `case` in
/// `RankTier` and one type here. Static requirements: the ranking loop calls `pack` for every
/// tier of every sink of every decision, through a metatype, with nothing to retain (closures
/// stored in a value cost a retain and a release at each call).
protocol TierRule: Sendable {
    /// The point of docs/policy.md that defines the tier.
    static var section: String { get }
    /// `.higher` when the first rank sorts first.
    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order
    /// Appends the tier's fields to a sort key: keys compare word by word (greater first) as
    /// `compare` does.
    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker)
    /// The tier's value in words; nil when the sink has none there.
    static func value(_ rank: SinkRank, _ explainer: RankExplainer) -> String?
    /// Why the sink has that value; only asked when `value` is not nil.
    static func why(_ rank: SinkRank, _ explainer: RankExplainer) -> String?
    /// What the winner had at this tier against what the runner-up had.
    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String)
}

/// A yes/no tier: yes ranks first.
protocol FlagTier: TierRule {
    static func flag(_ rank: SinkRank) -> Bool
    /// The value in words when yes.
    static var yes: String { get }
    static var contrasted: (String, String) { get }
}

extension FlagTier {
    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order { SinkRank.better(flag(a), flag(b)) }
    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) { packer.add(flag(rank) ? 1 : 0, bits: 1) }
    static func value(_ rank: SinkRank, _: RankExplainer) -> String? { flag(rank) ? yes : nil }
    static func contrast(_: SinkRank, _: SinkRank) -> (String, String) { contrasted }
}

extension RankTier {
    var rule: any TierRule.Type {
        switch self {
        case .override: OverrideTier.self
        case .restore: RestoreTier.self
        case .worn: WornTier.self
        case .arrived: ArrivedTier.self
        case .rulePriority: RulePriorityTier.self
        case .lastChoice: LastChoiceTier.self
        case .classOrder: ClassOrderTier.self
        case .sessionPriority: SessionPriorityTier.self
        }
    }
}

enum OverrideTier: FlagTier {
    static let section = "§2.1", yes = "the user's pick", contrasted = ("the user's pick", "not picked")
    static func flag(_ rank: SinkRank) -> Bool { rank.override }
    static func why(_ rank: SinkRank, _ explainer: RankExplainer) -> String? {
        "§2.1 the user chose this sink by hand; the override holds until the next placement transition or sink arrival"
            + (rank.overridesRejection.map { "; it holds although \(explainer.why($0)) (§5: the user is in charge)" } ?? "")
    }
}

enum RestoreTier: FlagTier {
    static let section = "§4", yes = "handed back", contrasted = ("handed back", "not handed back")
    static func flag(_ rank: SinkRank) -> Bool { rank.restore }
    static func why(_: SinkRank, _: RankExplainer) -> String? { "§4 it was the default before the accessory that just came off took the output" }
}

enum WornTier: TierRule {
    static let section = "§2.2"

    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order {
        switch (a.worn, b.worn) {
        case (nil, nil): return .same
        case (_?, nil): return .higher
        case (nil, _?): return .lower
        case (let x?, let y?):
            if x.paired != y.paired { return x.paired ? .higher : .lower }
            if x.since != y.since { return x.since > y.since ? .higher : .lower }
            return SinkRank.better(x.primarySource != nil, y.primarySource != nil)
        }
    }

    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) {
        packer.add(rank.worn == nil ? 0 : 1, bits: 1)
        packer.add(rank.worn?.paired == true ? 1 : 0, bits: 1)
        packer.addWord(rank.worn.map { SortKeyPacker.ordered($0.since) } ?? 0)
        packer.add(rank.worn?.primarySource == nil ? 0 : 1, bits: 1)
    }

    static func value(_ rank: SinkRank, _: RankExplainer) -> String? {
        rank.worn.map { "put on \($0.since) ms" + ($0.primarySource == nil ? "" : ", primary source") + ($0.paired ? ", paired with the output" : "") }
    }

    static func why(_ rank: SinkRank, _ explainer: RankExplainer) -> String? {
        guard let worn = rank.worn else { return nil }
        let accessory = rank.accessory.map { "\($0)" } ?? "?"
        let source = worn.primarySource.map { "; its primary source \(explainer.hostAddressWithOrigin($0)) is this host, not only its secondary" } ?? ""
        let paired = worn.paired ? "; the output plays on it: its microphone goes with it (§8)" : ""
        return "§2.2 accessory \(accessory) is \(worn.placement.rawValue) since \(worn.since) ms (the most recently put on ranks first)\(source)\(paired)"
    }

    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String) {
        guard let x = a.worn else { return ("not worn", "not worn") }
        guard let y = b.worn else { return ("put on \(x.since) ms", "not worn") }
        if x.paired != y.paired { return ("paired with the output", "not") }
        if x.since != y.since { return ("put on \(x.since) ms", "\(y.since) ms") }
        return ("put on \(x.since) ms, primary source this host", "only secondary source this host")
    }
}

enum ArrivedTier: TierRule {
    static let section = "§2.3"

    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order {
        switch (a.arrivedAt, b.arrivedAt) {
        case (nil, nil): return .same
        case (_?, nil): return .higher
        case (nil, _?): return .lower
        case (let x?, let y?): return x == y ? .same : (x > y ? .higher : .lower)
        }
    }

    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) {
        packer.add(rank.arrivedAt == nil ? 0 : 1, bits: 1)
        packer.addWord(rank.arrivedAt.map(SortKeyPacker.ordered) ?? 0)
    }

    static func value(_ rank: SinkRank, _: RankExplainer) -> String? { rank.arrivedAt.map { "arrived \($0) ms" } }

    static func why(_ rank: SinkRank, _: RankExplainer) -> String? {
        let port = rank.port.map { " (port \"\($0)\" plugged in)" } ?? ""
        return "§2.3 a \(rank.sinkClass.rawValue) sink (personal class) that arrived at \(rank.arrivedAt ?? 0) ms\(port) (the most recent arrival ranks first)"
    }

    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String) {
        guard let x = a.arrivedAt else { return ("not arrived", "not arrived") }
        return ("arrived \(x) ms", b.arrivedAt.map { "\($0) ms" } ?? "not arrived")
    }
}

enum RulePriorityTier: TierRule {
    static let section = "§2.4"
    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order { SinkRank.order(a.priority, b.priority) }
    /// Config priorities are -1000 … 1000; anything in Int32 keeps its order.
    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) { packer.addSigned32(rank.priority) }
    static func value(_ rank: SinkRank, _: RankExplainer) -> String? { rank.rule.map { "priority \($0.priority)" } }

    static func why(_ rank: SinkRank, _ explainer: RankExplainer) -> String? {
        guard let match = rank.rule else { return nil }
        let rule = explainer.config.rules[match.index]
        return "§2.4 rule at \(rule.location?.fileLine ?? "built-in") (\(rule.matchDescription)) priority \(match.priority)"
    }

    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String) { ("priority \(a.priority)", "\(b.priority)") }
}

enum LastChoiceTier: FlagTier {
    static let section = "§2.5", yes = "last choice", contrasted = ("the user's last choice", "not")
    static func flag(_ rank: SinkRank) -> Bool { rank.lastChoice }
    static func why(_: SinkRank, _: RankExplainer) -> String? { "§2.5 the user's own last choice" }
}

enum ClassOrderTier: TierRule {
    static let section = "§2.6"
    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order { SinkRank.order(a.classPlaces, b.classPlaces) }
    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) { packer.add(UInt64(min(max(rank.classPlaces, 0), 0xFFFF)), bits: 16) }

    static func value(_ rank: SinkRank, _ explainer: RankExplainer) -> String? {
        "\(rank.sinkClass.rawValue) (\(rank.classPlaces) of \(explainer.config.classOrder.count))"
    }

    static func why(_ rank: SinkRank, _ explainer: RankExplainer) -> String? {
        let evidence = rank.port.map { ", from port \"\($0)\"" } ?? ""
        return "§2.6 class \(rank.sinkClass.rawValue)\(evidence), \(rank.classPlaces) place(s) from the bottom of class-order [\(explainer.config.classOrder.map(\.rawValue).joined(separator: ", "))]"
    }

    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String) { ("class \(a.sinkClass.rawValue)", "\(b.sinkClass.rawValue)") }
}

enum SessionPriorityTier: TierRule {
    static let section = "§2.7"

    static func compare(_ a: SinkRank, _ b: SinkRank) -> SinkRank.Order {
        let session = SinkRank.order(a.sessionPriority, b.sessionPriority)
        return session != .same ? session : SinkRank.order(a.routePriority, b.routePriority)
    }

    static func pack(_ rank: SinkRank, into packer: inout SortKeyPacker) {
        packer.addSigned32(rank.sessionPriority)
        packer.addSigned32(rank.routePriority)
    }

    static func value(_ rank: SinkRank, _: RankExplainer) -> String? {
        if rank.sessionPriority == 0 && rank.routePriority == 0 { return nil }
        return rank.port == nil ? "priority.session \(rank.sessionPriority)" : "priority.session \(rank.sessionPriority), route \(rank.routePriority)"
    }

    static func why(_ rank: SinkRank, _: RankExplainer) -> String? {
        let route = rank.port.map { " and port \"\($0)\"'s priority \(rank.routePriority)" } ?? ""
        return "§2.7 the system's own order: the node's priority.session \(rank.sessionPriority)\(route), as the session manager ranks it"
    }

    static func contrast(_ a: SinkRank, _ b: SinkRank) -> (String, String) {
        a.sessionPriority != b.sessionPriority
            ? ("priority.session \(a.sessionPriority)", "\(b.sessionPriority)")
            : ("route priority \(a.routePriority)", "\(b.routePriority)")
    }
}
