import AudioGraph

/// Which default a side of the policy decides: the output (the default sink) or the input
/// (the default source, the microphone; docs/policy.md §8).
public enum AudioDirection: String, Sendable, Hashable, Codable, CaseIterable {
    case output, input

    /// The direction of the device routes that serve this side's nodes.
    var routeDirection: PortDirection { self == .output ? .output : .input }

    /// `sinks` / `sources`, for summaries.
    public var nodesNoun: String { self == .output ? "sinks" : "sources" }
}

extension PolicyEngine {
    /// Runs `body` on the output's side, then the input's, in place (a key path per side went
    /// through the runtime's projection on every graph change).
    @inline(__always)
    mutating func forEachSide(_ body: (inout EndpointSide) throws -> Void) rethrows {
        try body(&output)
        try body(&input)
    }
}

/// One side of the policy (docs/policy.md §8): its candidates and everything the engine
/// remembers about its default. The output and the input each have one; both are ranked by
/// the same machinery (eligibility §1, tiers §2), so an input rule reads as its output rule.
struct EndpointSide: Sendable, Hashable {
    let direction: AudioDirection
    /// The candidates: sinks for the output, sources for the input.
    var table = SinkTable()
    var scratch = RankingScratch()
    /// The default as last decided (initially the graph's configured default).
    var currentDefault: String?
    /// The default `holdCurrentDefault()` found and holds (nil once a pick replaced it).
    var foundDefault: String?
    /// The port the default plays to or records from (its active route's label).
    var currentPort: String?
    /// A hand-picked default that holds until the next placement transition or arrival.
    var userOverride: String?
    /// The user's most recent choice; outlives the override.
    var lastUserChoice: String?
    /// The node a removed accessory gave this side back to; holds like an override.
    var restoreHold: String?
    /// For each worn accessory that took this side, the default it took it from.
    var restoreTargets: [AccessoryIdentity: String] = [:]
    /// Arrivals still settling, and each name's recent arrivals (§1 `settling`).
    var arrivals = ArrivalGuard()

    init(direction: AudioDirection) { self.direction = direction }

    /// The configured default of this side in `graph`, and the effective one.
    static func configured(_ direction: AudioDirection, in graph: Graph) -> String? {
        direction == .output ? graph.configuredDefaultSinkName : graph.configuredDefaultSourceName
    }

    static func effective(_ direction: AudioDirection, in graph: Graph) -> String? {
        direction == .output ? graph.effectiveDefaultSinkName : graph.effectiveDefaultSourceName
    }

    /// Whether `node` is a candidate of this side.
    func isCandidate(_ node: Node) -> Bool {
        direction == .output ? node.isAudioSink : node.isAudioSource
    }

    /// A node of the graph this side does not rank but a user may choose as its default: on
    /// the input side a sink (its monitor), named as WirePlumber names it (the sink's name) or as
    /// the PulseAudio layer does (`<sink>.monitor`).
    func isForeign(_ name: String, in graph: Graph) -> Bool {
        if let node = graph.node(named: name) { return !isCandidate(node) }
        guard direction == .input, name.hasSuffix(".monitor") else { return false }
        return graph.node(named: String(name.dropLast(".monitor".count)))?.isAudioSink == true
    }

    mutating func rebuild(graph: Graph, config: PolicyConfig, arrivedAt: (ObjectID) -> Milliseconds?) {
        table = SinkTable()
        let nodes = direction == .output ? graph.sinks : graph.sources
        for node in nodes {
            if let features = SinkFeatures(node: node, graph: graph, config: config, arrivedAt: arrivedAt(node.id), direction: direction) {
                table.upsert(features)
            }
        }
    }

    /// A new candidate ends the override (§5) and any restore hold.
    mutating func arrived() {
        userOverride = nil
        restoreHold = nil
    }

    /// The user picked `name` by hand.
    mutating func select(_ name: String) {
        foundDefault = nil
        userOverride = name
        lastUserChoice = name
        restoreHold = nil
    }

    /// Starting changes nothing (§5): the configured default if that node exists, else the
    /// effective one, holds as the override until the next transition, arrival or pick.
    mutating func holdCurrentDefault(in graph: Graph) {
        guard let name = defaultFound(in: graph) else { return }
        userOverride = name
        foundDefault = name
    }

    /// The default `holdCurrentDefault(in:)` takes from `graph` (over this side's table):
    /// the configured one if this side ranks that node, else the effective one if it does.
    func defaultFound(in graph: Graph) -> String? {
        // A configured default of a node this side does not rank (a sink's monitor as the
        // default source) is the user's pick: it holds too, outside the ranking.
        let configured = Self.configured(direction, in: graph).flatMap { name in
            table.slot(named: name) != nil || isForeign(name, in: graph) ? name : nil
        }
        guard let name = configured ?? Self.effective(direction, in: graph), table.slot(named: name) != nil || isForeign(name, in: graph)
        else { return nil }
        return name
    }

    /// The default found at start or reconnect still holds as the decision.
    var holdsFoundDefault: Bool { foundDefault != nil && userOverride == foundDefault && currentDefault == foundDefault }

    /// A pick (or a hand-back) on a node that was unplugged ends as a gone one does (§5).
    mutating func dropUnavailableHolds() {
        for name in [userOverride, restoreHold].compactMap({ $0 }) {
            guard let slot = table.slot(named: name), table[slot].routes?.isAvailable == false else { continue }
            if userOverride == name { userOverride = nil }
            if restoreHold == name { restoreHold = nil }
        }
    }
}
