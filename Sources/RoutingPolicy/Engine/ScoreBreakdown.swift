import AudioGraph

/// A sink's score as its terms' values plus what explains them. Plain values only, so the
/// scoring loop fills it without allocating; `Decision.explanation(of:)` turns it into text.
public struct ScoreBreakdown: Sendable, Hashable {
    public var userOverride: Int64 = 0
    public var restorePrevious: Int64 = 0
    public var worn: Int64 = 0
    public var primarySource: Int64 = 0
    public var arrival: Int64 = 0
    public var lastChoice: Int64 = 0
    public var rulePriority: Int64 = 0
    public var classOrder: Int64 = 0

    public var total: Int64 {
        userOverride + restorePrevious + worn + primarySource + arrival + lastChoice + rulePriority + classOrder
    }

    // Context for the explanation.
    var accessory: AccessoryIdentity?
    var placement: Placement?
    var wornSince: Milliseconds?
    /// The primary source that earned `primarySource`: one of this host's addresses.
    var primarySourceAddress: BluetoothAddress?
    /// 1 for the oldest of `wornOf` worn accessories, `wornOf` for the most recently put on.
    var wornRank: Int32 = 0
    var wornOf: Int32 = 0
    var arrivedAt: Milliseconds?
    var arrivalRank: Int32 = 0
    var arrivalOf: Int32 = 0
    var ruleIndex: Int32 = -1
    var priority: Int32 = 0
    var sinkClass: SinkClass = .other
    var classPlaces: Int32 = 0
}

/// An eligible sink and its score.
public struct RankedSink: Sendable, Hashable {
    public var node: String
    public var id: ObjectID
    public var score: ScoreBreakdown
    /// `score.total`, stored so sorting does not re-add the terms.
    public var total: Int64
}

/// Why a sink is out (design.md §1).
public enum Rejection: Sendable, Hashable {
    /// A config rule ignores it (index into `rules`).
    case ignored(rule: Int)
    /// Its accessory has audio-switching and is off the head.
    case offHead(AccessoryIdentity)
    /// Its source identifiers are set and none is this host.
    case otherHost(AccessoryIdentity, primary: BluetoothAddress?, secondary: BluetoothAddress?)
    /// Its accessory has no audio-switching: only the user may choose it.
    case manualOnly(AccessoryIdentity?, staticEntry: Int)
    /// The sink named by the default or the override is not in the graph.
    case gone

    /// The short label the summary counts by.
    public var kind: String {
        switch self {
        case .ignored: "ignored"
        case .offHead: "off-head"
        case .otherHost: "other-host"
        case .manualOnly: "manual-only"
        case .gone: "gone"
        }
    }

    static let kindOrder = ["off-head", "other-host", "manual-only", "ignored", "gone"]
}

public struct RejectedSink: Sendable, Hashable {
    public var node: String
    public var rejection: Rejection
}
