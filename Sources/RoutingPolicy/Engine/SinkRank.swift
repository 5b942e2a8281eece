import AudioGraph

/// A sink's rank: its value in every tier (docs/policy.md §2), plain values the ranking loop
/// fills without allocating. `compare(_:_:order:)` compares two ranks tier by tier;
/// `Decision.explanation(of:)` turns one into named terms.
public struct SinkRank: Sendable, Hashable {
    /// A worn accessory with audio-switching (§2.2).
    public struct Worn: Sendable, Hashable {
        /// When the accessory went on (the placement transition that made it worn).
        public var since: Milliseconds
        public var placement: Placement
        /// Set when the accessory's primary source is one of this host's addresses: it then ranks
        /// above one put on at the same time for which this host is only the secondary source.
        public var primarySource: BluetoothAddress?
        /// The input side (§8): the accessory is the one the output's default plays on; its
        /// source ranks first among worn ones, so the microphone goes with the headset.
        public var paired = false
    }

    /// A matching `[[rule]]` with a priority (§2.4).
    public struct Rule: Sendable, Hashable {
        /// Index into the config's `rules`.
        public var index: Int
        public var priority: Int
    }

    /// §2.1: the user's override holds and names this sink.
    public var override = false
    /// The rule of §1 that would leave this sink out, set aside because the user picked it by
    /// hand (§5: a wrong sensor or a rule must not fight the user).
    public var overridesRejection: Rejection?
    /// §4: the sink handed back when an accessory came off.
    public var restore = false
    public var worn: Worn?
    /// §2.3: when a sink of a personal class arrived; nil for sinks present at start and
    /// sinks of other classes.
    public var arrivedAt: Milliseconds?
    public var rule: Rule?
    /// §2.5: the user's last hand-picked sink.
    public var lastChoice = false
    public var sinkClass: SinkClass = .other
    /// Places from the bottom of the class order: the first class of `class-order` has as many
    /// places as the list is long, an unlisted class 0.
    public var classPlaces = 0
    /// The accessory the sink belongs to, if any (also when it is not worn).
    public var accessory: AccessoryIdentity?

    /// The rule priority this rank competes with: 0 without a matching rule.
    public var priority: Int { rule?.priority ?? 0 }

    /// §2.7: the node's `priority.session` (0 without one).
    public var sessionPriority = 0
    /// §2.7: the active route's priority (0 without route information).
    public var routePriority = 0
    /// The port the sink plays to now (its active route's description), when the device says.
    public var port: String?

    /// How `a` compares to `b` at one tier: `.higher` when `a` ranks higher (sorts first).
    public static func compare(_ a: SinkRank, _ b: SinkRank, at tier: RankTier) -> Order {
        tier.rule.compare(a, b)
    }

    /// The first tier of `order` where `a` and `b` differ, and which of them it favours; nil when
    /// they are equal in every tier (the node name then decides).
    public static func firstDifference(_ a: SinkRank, _ b: SinkRank, order: [RankTier]) -> (tier: RankTier, order: Order)? {
        for tier in order {
            let result = compare(a, b, at: tier)
            if result != .same { return (tier, result) }
        }
        return nil
    }

    /// This rank as a sort key: unsigned words such that comparing two keys word by word
    /// (greater first) orders the ranks as `compare(_:_:at:)` does tier by tier in `order`.
    /// Small values (flags, priorities, class places) share words; a time takes a word of its
    /// own, after a presence bit, so an absent time is below every time. Every rank packs the
    /// same fields in the same places, so all keys of one ranking line up.
    func sortKey(order: [any TierRule.Type]) -> SortKey {
        var packer = SortKeyPacker()
        for tier in order { tier.pack(self, into: &packer) }
        return packer.finish()
    }

    public enum Order: Sendable, Hashable {
        case higher, same, lower
    }

    static func better(_ a: Bool, _ b: Bool) -> Order { a == b ? .same : (a ? .higher : .lower) }

    static func order(_ a: Int, _ b: Int) -> Order { a == b ? .same : (a > b ? .higher : .lower) }
}

/// An eligible sink and its rank.
public struct RankedSink: Sendable, Hashable {
    public var node: String
    public var id: ObjectID
    public var rank: SinkRank
}

/// Why a sink is out (docs/policy.md §1).
public enum Rejection: Sendable, Hashable {
    /// A config rule ignores it (index into `rules`).
    case ignored(rule: Int)
    /// Its accessory has audio-switching and is off the head.
    case offHead(AccessoryIdentity)
    /// Its source identifiers are set and none is this host.
    case otherHost(AccessoryIdentity, primary: BluetoothAddress?, secondary: BluetoothAddress?)
    /// Its accessory has no audio-switching: only the user may choose it.
    case manualOnly(ManualAccessory)
    /// The sink named by the default or the override is not in the graph.
    case gone
    /// Every route of its profile device is `available: no` (an empty jack, a monitor off):
    /// the port the judgement names.
    case unavailable(port: String)
    /// It has no input ports (yet): it cannot take audio.
    case noPorts
    /// A sink of no hardware (a null or filter sink): only the user or a rule chooses it.
    case virtual
    /// It arrived and has not stayed its settle time yet (until `until`); `flapping`: it keeps
    /// coming and going and is held back longer.
    case settling(until: Milliseconds, flapping: Bool)
    /// A Bluetooth headset's microphone kept for calls (`[input] bluetooth-microphone =
    /// "calls"`, §8): recording from it would switch the headset from A2DP to the hands-free
    /// profile; `handsFree`: the headset is in that profile for a call.
    case callsOnly(handsFree: Bool)
    /// A Bluetooth microphone, which `[input] bluetooth-microphone = "never"` leaves out.
    case bluetoothNever

    /// Which accessory without audio-switching a sink belongs to.
    public enum ManualAccessory: Sendable, Hashable {
        /// Registered by a reporter.
        case registered(AccessoryIdentity)
        /// A static `[[accessory]]` of the config (index into `accessories`).
        case configured(entry: Int)
    }

    /// The short label the summary counts by.
    public var kind: String {
        switch self {
        case .ignored: "ignored"
        case .offHead: "off-head"
        case .otherHost: "other-host"
        case .manualOnly: "manual-only"
        case .gone: "gone"
        case .unavailable: "unavailable"
        case .noPorts: "no-ports"
        case .virtual: "virtual"
        case .settling: "settling"
        case .callsOnly: "calls-only"
        case .bluetoothNever: "bluetooth-never"
        }
    }

    static let kindOrder = [
        "off-head", "other-host", "manual-only", "ignored", "unavailable", "no-ports", "virtual", "settling", "calls-only", "bluetooth-never", "gone",
    ]
}

public struct RejectedSink: Sendable, Hashable {
    public var node: String
    public var rejection: Rejection
}

/// A rank packed for sorting (`SinkRank.sortKey(order:)`). Every tier order fits in eight
/// words: the two times take a word each, and the small fields between and around them (118
/// bits in all, none wider than 32) at most two words per stretch.
struct SortKey: Sendable, Hashable {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// 1 when `self` ranks above `other`, -1 below, 0 equal: one pass, stopping at the first
    /// word that differs.
    @inline(__always)
    func compare(_ other: SortKey) -> Int {
        if words.0 != other.words.0 { return words.0 > other.words.0 ? 1 : -1 }
        if words.1 != other.words.1 { return words.1 > other.words.1 ? 1 : -1 }
        if words.2 != other.words.2 { return words.2 > other.words.2 ? 1 : -1 }
        if words.3 != other.words.3 { return words.3 > other.words.3 ? 1 : -1 }
        if words.4 != other.words.4 { return words.4 > other.words.4 ? 1 : -1 }
        if words.5 != other.words.5 { return words.5 > other.words.5 ? 1 : -1 }
        if words.6 != other.words.6 { return words.6 > other.words.6 ? 1 : -1 }
        if words.7 != other.words.7 { return words.7 > other.words.7 ? 1 : -1 }
        return 0
    }

    func isEqual(to other: SortKey) -> Bool {
        words.0 == other.words.0 && words.1 == other.words.1 && words.2 == other.words.2 && words.3 == other.words.3
            && words.4 == other.words.4 && words.5 == other.words.5 && words.6 == other.words.6 && words.7 == other.words.7
    }

    static func == (a: SortKey, b: SortKey) -> Bool { a.isEqual(to: b) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(words.4)
        hasher.combine(words.5)
        hasher.combine(words.6)
        hasher.combine(words.7)
    }
}

/// Packs fields most significant first into the words of a `SortKey`.
struct SortKeyPacker {
    private var key = SortKey()
    private var count = 0
    private var current: UInt64 = 0
    private var used = 0

    /// A time as an unsigned word in the same order (the sign bit flipped).
    static func ordered(_ time: Int64) -> UInt64 { UInt64(bitPattern: time) ^ (1 << 63) }

    @inline(__always)
    mutating func add(_ value: UInt64, bits: Int) {
        if used + bits > 64 { flush() }
        current = (current << UInt64(bits)) | value
        used += bits
    }

    /// A signed value in 32 bits, order kept (clamped to Int32).
    mutating func addSigned32(_ value: Int) {
        let clamped = Int64(min(max(value, Int(Int32.min)), Int(Int32.max)))
        add(UInt64(clamped - Int64(Int32.min)), bits: 32)
    }

    mutating func addWord(_ value: UInt64) {
        flush()
        emit(value)
    }

    private mutating func flush() {
        guard used > 0 else { return }
        emit(used == 64 ? current : current << UInt64(64 - used))
        current = 0
        used = 0
    }

    private mutating func emit(_ word: UInt64) {
        switch count {
        case 0: key.words.0 = word
        case 1: key.words.1 = word
        case 2: key.words.2 = word
        case 3: key.words.3 = word
        case 4: key.words.4 = word
        case 5: key.words.5 = word
        case 6: key.words.6 = word
        default:
            precondition(count == 7, "a sort key has eight words")
            key.words.7 = word
        }
        count += 1
    }

    mutating func finish() -> SortKey {
        flush()
        return key
    }
}
