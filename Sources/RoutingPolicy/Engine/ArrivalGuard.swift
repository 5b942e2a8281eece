import AudioGraph

/// Arrivals that have to settle before they count (docs/policy.md §1 `settling`): a node that
/// appears takes part only once it has stayed `timing.arrival-settle-ms`, so one created and
/// destroyed again at once (a USB device resetting, a flaky hub, a hostile client) never moves
/// the default. A node whose name arrives `flapArrivals` times within `flapWindow` keeps
/// flapping: it is said once and held back until it stays `timing.flap-hold-ms`.
///
/// Bounded: one entry per node settling now (nodes of the graph), and the recent arrival times
/// of at most `maximumNames` names, `flapArrivals` each. No lookup happens while nothing settles.
struct ArrivalGuard: Sendable, Hashable {
    /// A node waiting out its settle time.
    struct Settling: Sendable, Hashable {
        var name: String
        var arrivedAt: Milliseconds
        var until: Milliseconds
        /// Held back as a flapping node (the longer hold), not the plain settle time.
        var flapping: Bool
    }

    /// Arrivals of one name within the window that make it a flapping node.
    static let flapArrivals = 6
    static let flapWindow: Milliseconds = 60_000
    /// Names whose recent arrivals are kept; past it the one that arrived longest ago goes.
    static let maximumNames = 256

    private(set) var settling: [ObjectID: Settling] = [:]
    /// Each name's recent arrival times, oldest first (at most `flapArrivals`).
    private var recent: [String: [Milliseconds]] = [:]
    /// Flapping names already said; said again only after a quiet window.
    private var said: Set<String> = []

    var isEmpty: Bool { settling.isEmpty }
    /// How many names' recent arrivals are kept.
    var rememberedNames: Int { recent.count }

    /// When the next settling node is due.
    var nextDue: Milliseconds? { settling.isEmpty ? nil : settling.values.lazy.map(\.until).min() }

    /// What an arrival of the node `id` named `name` comes to: nil when it counts at once (no
    /// settle time, not flapping); else its settling entry, and whether it has just started
    /// flapping (to be said once).
    mutating func arrive(_ id: ObjectID, name: String, at now: Milliseconds, settle: Milliseconds, flapHold: Milliseconds)
        -> (entry: Settling?, newlyFlapping: FlappingNode?)
    {
        var times = recent[name] ?? []
        times.removeAll { now - $0 >= Self.flapWindow }
        // Quiet for a whole window: a new episode, said again if it flaps again.
        if times.isEmpty { said.remove(name) }
        times.append(now)
        if times.count > Self.flapArrivals { times.removeFirst(times.count - Self.flapArrivals) }
        if recent[name] == nil, recent.count >= Self.maximumNames { evict(now: now) }
        recent[name] = times
        let flapping = times.count >= Self.flapArrivals
        var notice: FlappingNode?
        if flapping, !said.contains(name) {
            said.insert(name)
            notice = FlappingNode(node: name, arrivals: times.count, within: now - times[0], holdFor: flapHold)
        }
        let wait = flapping ? max(settle, flapHold) : settle
        guard wait > 0 else { return (nil, notice) }
        let entry = Settling(name: name, arrivedAt: now, until: now + wait, flapping: flapping)
        settling[id] = entry
        return (entry, notice)
    }

    /// The node left before it settled (or left at all).
    mutating func forget(_ id: ObjectID) {
        if !settling.isEmpty { settling[id] = nil }
    }

    /// Takes the nodes due by `now` out of settling.
    mutating func settle(dueBy now: Milliseconds) -> [(id: ObjectID, entry: Settling)] {
        let due = settling.filter { $0.value.until <= now }.map { (id: $0.key, entry: $0.value) }.sorted { $0.entry.until < $1.entry.until }
        for item in due { settling[item.id] = nil }
        return due
    }

    /// A reconnect gives every node a new id: what was settling is dropped (the caller counts
    /// those names as arrivals of the new graph) and the names returned.
    mutating func dropSettling() -> Set<String> {
        let names = Set(settling.values.map(\.name))
        settling = [:]
        return names
    }

    /// Makes room for one more name: names quiet for a whole window go, else the one whose
    /// last arrival is oldest.
    private mutating func evict(now: Milliseconds) {
        let quiet = recent.filter { now - ($0.value.last ?? 0) >= Self.flapWindow }.map(\.key)
        for name in quiet {
            recent[name] = nil
            said.remove(name)
        }
        if recent.count >= Self.maximumNames, let oldest = recent.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
            recent[oldest] = nil
            said.remove(oldest)
        }
    }
}

/// A node that keeps coming and going (docs/policy.md §1 `settling`): said once when it starts
/// flapping; held back until it stays `holdFor`.
public struct FlappingNode: Sendable, Hashable {
    /// Its node.name.
    public var node: String
    /// Arrivals counted, and the time they came within.
    public var arrivals: Int
    public var within: Milliseconds
    public var holdFor: Milliseconds
    /// Which side's node (a sink, a source).
    public var direction: AudioDirection = .output

    /// `sink X keeps coming and going (6 arrivals within 600 ms): held back until it stays 10000 ms`.
    public var sentence: String {
        "\(direction == .output ? "sink" : "source") \(node) keeps coming and going (\(arrivals) arrivals within \(within) ms): held back until it stays \(holdFor) ms"
    }
}
