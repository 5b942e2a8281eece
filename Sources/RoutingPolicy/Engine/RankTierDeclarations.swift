/// Each tier, declared once: how two ranks compare at it, how it packs into a sort key (in the
/// same order as `compare`), its value and reason in an explanation, and what the winner and
/// the runner-up had there. Adding a tier is one more `case` in `RankTier` and one declaration
/// here. A class: the ranking loop walks the declarations for every sink of every decision, and
/// a struct of six closures was copied (six retains) at each step.
final class TierDeclaration: Sendable {
    /// The point of docs/policy.md that defines the tier.
    let section: String
    /// `.higher` when the first rank sorts first.
    let compare: @Sendable (SinkRank, SinkRank) -> SinkRank.Order
    /// Appends the tier's fields to a sort key: keys compare word by word (greater first) as
    /// `compare` does.
    let pack: @Sendable (SinkRank, inout SortKeyPacker) -> Void
    /// The tier's value in words; nil when the sink has none there.
    let value: @Sendable (SinkRank, RankExplainer) -> String?
    /// Why the sink has that value; only asked when `value` is not nil.
    let why: @Sendable (SinkRank, RankExplainer) -> String?
    /// What the winner had at this tier against what the runner-up had.
    let contrast: @Sendable (SinkRank, SinkRank) -> (String, String)

    init(
        section: String, compare: @escaping @Sendable (SinkRank, SinkRank) -> SinkRank.Order,
        pack: @escaping @Sendable (SinkRank, inout SortKeyPacker) -> Void, value: @escaping @Sendable (SinkRank, RankExplainer) -> String?,
        why: @escaping @Sendable (SinkRank, RankExplainer) -> String?, contrast: @escaping @Sendable (SinkRank, SinkRank) -> (String, String)
    ) {
        self.section = section
        self.compare = compare
        self.pack = pack
        self.value = value
        self.why = why
        self.contrast = contrast
    }
}

extension RankTier {
    var declaration: TierDeclaration {
        switch self {
        case .override: TierDeclaration.override
        case .restore: TierDeclaration.restore
        case .worn: TierDeclaration.worn
        case .arrived: TierDeclaration.arrived
        case .rulePriority: TierDeclaration.rulePriority
        case .lastChoice: TierDeclaration.lastChoice
        case .classOrder: TierDeclaration.classOrder
        case .sessionPriority: TierDeclaration.sessionPriority
        }
    }
}

extension TierDeclaration {
    static let override = flag(
        "§2.1", { $0.override }, value: "the user's pick", contrast: ("the user's pick", "not picked"),
        why: { rank, explainer in
            "§2.1 the user chose this sink by hand; the override holds until the next placement transition or sink arrival"
                + (rank.overridesRejection.map { "; it holds although \(explainer.why($0)) (§5: the user is in charge)" } ?? "")
        })

    static let restore = flag(
        "§4", { $0.restore }, value: "handed back", contrast: ("handed back", "not handed back"),
        why: { _, _ in "§4 it was the default before the accessory that just came off took the output" })

    static let worn = TierDeclaration(
        section: "§2.2",
        compare: { a, b in
            switch (a.worn, b.worn) {
            case (nil, nil): return .same
            case (_?, nil): return .higher
            case (nil, _?): return .lower
            case (let x?, let y?):
                if x.since != y.since { return x.since > y.since ? .higher : .lower }
                return SinkRank.better(x.primarySource != nil, y.primarySource != nil)
            }
        },
        pack: { rank, packer in
            packer.add(rank.worn == nil ? 0 : 1, bits: 1)
            packer.addWord(rank.worn.map { SortKeyPacker.ordered($0.since) } ?? 0)
            packer.add(rank.worn?.primarySource == nil ? 0 : 1, bits: 1)
        },
        value: { rank, _ in rank.worn.map { "put on \($0.since) ms" + ($0.primarySource == nil ? "" : ", primary source") } },
        why: { rank, explainer in
            guard let worn = rank.worn else { return nil }
            let accessory = rank.accessory.map { "\($0)" } ?? "?"
            let source = worn.primarySource.map { "; its primary source \(explainer.hostAddressWithOrigin($0)) is this host, not only its secondary" } ?? ""
            return "§2.2 accessory \(accessory) is \(worn.placement.rawValue) since \(worn.since) ms (the most recently put on ranks first)\(source)"
        },
        contrast: { a, b in
            guard let x = a.worn else { return ("not worn", "not worn") }
            guard let y = b.worn else { return ("put on \(x.since) ms", "not worn") }
            if x.since != y.since { return ("put on \(x.since) ms", "\(y.since) ms") }
            return ("put on \(x.since) ms, primary source this host", "only secondary source this host")
        })

    static let arrived = TierDeclaration(
        section: "§2.3",
        compare: { a, b in
            switch (a.arrivedAt, b.arrivedAt) {
            case (nil, nil): return .same
            case (_?, nil): return .higher
            case (nil, _?): return .lower
            case (let x?, let y?): return x == y ? .same : (x > y ? .higher : .lower)
            }
        },
        pack: { rank, packer in
            packer.add(rank.arrivedAt == nil ? 0 : 1, bits: 1)
            packer.addWord(rank.arrivedAt.map(SortKeyPacker.ordered) ?? 0)
        },
        value: { rank, _ in rank.arrivedAt.map { "arrived \($0) ms" } },
        why: { rank, _ in
            let port = rank.port.map { " (port \"\($0)\" plugged in)" } ?? ""
            return "§2.3 a \(rank.sinkClass.rawValue) sink (personal class) that arrived at \(rank.arrivedAt ?? 0) ms\(port) (the most recent arrival ranks first)"
        },
        contrast: { a, b in
            guard let x = a.arrivedAt else { return ("not arrived", "not arrived") }
            return ("arrived \(x) ms", b.arrivedAt.map { "\($0) ms" } ?? "not arrived")
        })

    static let rulePriority = TierDeclaration(
        section: "§2.4",
        compare: { a, b in SinkRank.order(a.priority, b.priority) },
        // Config priorities are -1000 … 1000; anything in Int32 keeps its order.
        pack: { rank, packer in packer.addSigned32(rank.priority) },
        value: { rank, _ in rank.rule.map { "priority \($0.priority)" } },
        why: { rank, explainer in
            guard let match = rank.rule else { return nil }
            let rule = explainer.config.rules[match.index]
            return "§2.4 rule at \(rule.location?.fileLine ?? "built-in") (\(rule.matchDescription)) priority \(match.priority)"
        },
        contrast: { a, b in ("priority \(a.priority)", "\(b.priority)") })

    static let lastChoice = flag(
        "§2.5", { $0.lastChoice }, value: "last choice", contrast: ("the user's last choice", "not"),
        why: { _, _ in "§2.5 the user's own last choice" })

    static let classOrder = TierDeclaration(
        section: "§2.6",
        compare: { a, b in SinkRank.order(a.classPlaces, b.classPlaces) },
        pack: { rank, packer in packer.add(UInt64(min(max(rank.classPlaces, 0), 0xFFFF)), bits: 16) },
        value: { rank, explainer in "\(rank.sinkClass.rawValue) (\(rank.classPlaces) of \(explainer.config.classOrder.count))" },
        why: { rank, explainer in
            let evidence = rank.port.map { ", from port \"\($0)\"" } ?? ""
            return "§2.6 class \(rank.sinkClass.rawValue)\(evidence), \(rank.classPlaces) place(s) from the bottom of class-order [\(explainer.config.classOrder.map(\.rawValue).joined(separator: ", "))]"
        },
        contrast: { a, b in ("class \(a.sinkClass.rawValue)", "\(b.sinkClass.rawValue)") })

    static let sessionPriority = TierDeclaration(
        section: "§2.7",
        compare: { a, b in
            let session = SinkRank.order(a.sessionPriority, b.sessionPriority)
            return session != .same ? session : SinkRank.order(a.routePriority, b.routePriority)
        },
        pack: { rank, packer in
            packer.addSigned32(rank.sessionPriority)
            packer.addSigned32(rank.routePriority)
        },
        value: { rank, _ in
            if rank.sessionPriority == 0 && rank.routePriority == 0 { return nil }
            return rank.port == nil ? "priority.session \(rank.sessionPriority)" : "priority.session \(rank.sessionPriority), route \(rank.routePriority)"
        },
        why: { rank, _ in
            let route = rank.port.map { " and port \"\($0)\"'s priority \(rank.routePriority)" } ?? ""
            return "§2.7 the system's own order: the node's priority.session \(rank.sessionPriority)\(route), as the session manager ranks it"
        },
        contrast: { a, b in
            a.sessionPriority != b.sessionPriority
                ? ("priority.session \(a.sessionPriority)", "\(b.sessionPriority)")
                : ("route priority \(a.routePriority)", "\(b.routePriority)")
        })

    /// A yes/no tier: yes ranks first.
    private static func flag(
        _ section: String, _ field: @escaping @Sendable (SinkRank) -> Bool, value: String, contrast: (String, String),
        why: @escaping @Sendable (SinkRank, RankExplainer) -> String?
    ) -> TierDeclaration {
        TierDeclaration(
            section: section,
            compare: { a, b in SinkRank.better(field(a), field(b)) },
            pack: { rank, packer in packer.add(field(rank) ? 1 : 0, bits: 1) },
            value: { rank, _ in field(rank) ? value : nil },
            why: why,
            contrast: { _, _ in contrast })
    }
}
