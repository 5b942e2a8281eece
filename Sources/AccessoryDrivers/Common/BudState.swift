import RoutingPolicy

/// Where one earbud is, as its headset last reported it.
public enum BudState: Sendable, Hashable, CaseIterable {
    case inEar
    /// Out of the ear (some protocols cannot tell "on the table" from "in the case": they say this).
    case outOfEar
    case inCase
    /// The headset says this bud is not connected to it (e.g. one bud left at home).
    case disconnected
    /// The headset sent a value no public note explains; never read as worn or unworn.
    case unrecognized
}

/// The two buds of one headset, in the order the protocol reports them.
///
/// The order is the protocol's own: Galaxy Buds say left then right; AAP says primary then
/// secondary (the bud carrying the microphone, which changes). Both wear rules are symmetric, so
/// the order never changes the placement.
public struct BudPair: Sendable, Hashable {
    public var first: BudState
    public var second: BudState

    public init(_ first: BudState, _ second: BudState) {
        self.first = first
        self.second = second
    }

    /// `.inEar` or `.offHead` under `rule`. A bud with an unrecognized value is never read as
    /// in an ear: when the other bud's state is known, that decides (so a bud that stopped
    /// making sense never holds a stale "worn"); nil only when neither bud's value is known
    /// (nothing invented either way).
    public func placement(rule: WearRule) -> Placement? {
        let buds = [first, second]
        if buds.allSatisfy({ $0 == .unrecognized }) { return nil }
        switch rule {
        case .either: return buds.contains(.inEar) ? .inEar : .offHead
        case .both: return buds.allSatisfy({ $0 == .inEar }) ? .inEar : .offHead
        }
    }
}
