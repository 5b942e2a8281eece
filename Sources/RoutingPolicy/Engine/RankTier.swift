/// One tier of the ranking (docs/policy.md §2). A sink's rank is a key compared tier by tier in
/// the config's `tier-order`: the first tier where two sinks differ decides between them, so no
/// lower tier can outweigh a higher one. After the last tier, the smaller `node.name` wins.
///
/// Everything about a tier — its config name, its section, how two ranks compare there, how it
/// packs into a sort key, and how it reads in an explanation — is declared once, in
/// its `TierRule` type (RankTierDeclarations.swift).
public enum RankTier: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// §2.1 the user's pick, while the override holds (§5).
    case override
    /// §4 the sink handed back when a worn accessory came off, while that holds.
    case restore
    /// §2.2 a worn accessory with audio-switching: the most recently put on first, then one whose
    /// primary source is this host above one where it is only the secondary source.
    case worn
    /// §2.3 a sink of a personal class that arrived after start: the most recent first.
    case arrived
    /// §2.4 the priority of the first `[[rule]]` matching the sink (0 without one).
    case rulePriority = "rule-priority"
    /// §2.5 the user's own last choice.
    case lastChoice = "last-choice"
    /// §2.6 the built-in class order.
    case classOrder = "class-order"
    /// §2.7 the system's own order: `priority.session`, then the active route's priority.
    case sessionPriority = "session-priority"

    /// docs/policy.md §2: rule priorities rank above the last choice; the system's own order
    /// only breaks ties the class leaves.
    public static let defaultOrder: [RankTier] = [.override, .restore, .worn, .arrived, .rulePriority, .lastChoice, .classOrder, .sessionPriority]

    public var description: String { rawValue }

    /// The point of docs/policy.md that defines the tier.
    public var section: String { rule.section }
}
