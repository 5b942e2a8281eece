import AudioGraph

/// What scoring needs to know about a sink (or, on the input side, a source: §8) that changes
/// only with the graph or the config, computed once per change so the scoring loop reads plain
/// fields, not property strings.
struct SinkFeatures: Sendable, Hashable {
    var id: ObjectID
    var name: String
    var sinkClass: SinkClass
    /// Places from the bottom of the class order (0 when the class is not listed).
    var classPlaces: Int
    var isPersonal: Bool
    /// The first matching rule, if any: an ignore, or a priority.
    var rule: MatchedRule?
    var address: BluetoothAddress?
    /// First matching `[[accessory]]` with capabilities (index into the config's `accessories`).
    var staticAccessory: Int?
    /// When the sink appeared after the engine started; nil for sinks present at start.
    var arrivedAt: Milliseconds?
    /// Position of (name, id) among all sinks, so ties sort by name without comparing strings.
    var nameRank = 0
    /// What the device's routes say about the sink; nil without route information.
    var routes: SinkRoutes?
    /// `n-input-ports` (a source: `n-output-ports`) is 0: it cannot take (give) audio yet.
    var hasNoPorts = false
    /// Its device (a headset's sink and source share one): the input side finds the accessory
    /// of a source through it when the accessory is known by its sink's name.
    var deviceID: ObjectID?
    /// A sink of no hardware (null and filter sinks): only the user or a rule chooses it.
    var isVirtual = false
    /// §2.7 `priority.session`, and the active route's priority.
    var sessionPriority = 0
    var routePriority = 0
    /// A source: what kind of Bluetooth microphone it is, if one (§8 `bluetooth-microphone`).
    var bluetooth: BluetoothInput?
    /// A Bluetooth node's profile (`api.bluez5.profile`): whether its device plays music or
    /// is in a hands-free profile now.
    var bluetoothProfile: BluetoothProfile?

    enum MatchedRule: Sendable, Hashable {
        case ignore(rule: Int)
        case priority(SinkRank.Rule)
    }

    var ignoredBy: Int? {
        if case .ignore(let index)? = rule { return index }
        return nil
    }

    init?(node: Node, graph: Graph, config: PolicyConfig, arrivedAt: Milliseconds?, direction: AudioDirection = .output) {
        guard direction == .output ? node.isAudioSink : node.isAudioSource, let name = node.name else { return nil }
        id = node.id
        self.name = name
        let route = graph.route(of: node, direction: direction.routeDirection)
        routes = route.map { SinkRoutes($0, node: node, graph: graph, direction: direction.routeDirection) }
        sinkClass = SinkClass.of(node, in: graph, route: route)
        let position = config.classOrder.firstIndex(of: sinkClass)
        classPlaces = position.map { config.classOrder.count - $0 } ?? 0
        isPersonal = sinkClass.canBePersonal && config.personalClasses.contains(sinkClass)
        hasNoPorts = (direction == .output ? node.inputPorts : node.outputPorts) == 0
        isVirtual = direction == .output ? node.isVirtualSink : node.isVirtualSource
        deviceID = node.deviceID
        sessionPriority = node.props["priority.session"].flatMap { Int($0) } ?? 0
        routePriority = route?.port?.priority ?? 0
        if let index = config.rules.firstIndex(where: { $0.holds(for: node, in: graph) }) {
            switch config.rules[index].action {
            case .ignore: rule = .ignore(rule: index)
            case .priority(let value): rule = .priority(SinkRank.Rule(index: index, priority: value))
            }
        }
        address = graph.bluetoothAddress(of: node).flatMap(BluetoothAddress.init)
        staticAccessory = config.accessories.firstIndex { $0.capabilities != nil && $0.matches(node, in: graph) }
        self.arrivedAt = arrivedAt
        bluetoothProfile = node.props["api.bluez5.profile"].map(BluetoothProfile.init)
        if direction == .input { bluetooth = BluetoothInput(node, in: graph) }
    }
}

/// A sink's routes as the policy reads them: the port it plays to, whether anything is plugged
/// in, and which personal ports (headphones, headset) of its profile device are plugged, so a
/// device change can tell a jack plugged in or pulled out (docs/policy.md §6). A class, compared
/// by value: the ranking loop copies sink features for every decision, and one reference costs
/// one retain where these fields cost one each.
final class SinkRoutes: Sendable, Hashable {
    /// The active route's name and label, and whether it is available.
    let activeName: String?
    let activeLabel: String?
    let activeAvailable: Bool
    /// False when every route for the sink is `no` (§1 `unavailable`).
    let isAvailable: Bool
    /// The port the judgement names (the active route, else the best of the others).
    let label: String
    /// Names of the routes for the sink that are `no` now.
    let unplugged: [String]
    /// Labels of the personal routes (headphones, headset) for the sink not `no` now, by name.
    let pluggedPersonal: [String: String]

    init(_ route: NodeRoute, node: Node, graph: Graph, direction: PortDirection = .output) {
        activeName = route.active?.name
        activeLabel = route.active?.label
        activeAvailable = route.active?.available.isAvailable ?? true
        isAvailable = route.isAvailable
        label = route.port?.label ?? "?"
        var unplugged: [String] = []
        var pluggedPersonal: [String: String] = [:]
        if let deviceID = node.deviceID, let routes = graph.devices[deviceID]?.routes,
            let profileDevice = node.props["card.profile.device"].flatMap({ Int($0) })
        {
            // The same routes `Graph.route(of:)` judges by: a headphones port of another profile
            // is not this sink's to plug.
            for candidate in routes.candidates(for: profileDevice, direction: direction) {
                if candidate.available == .no {
                    unplugged.append(candidate.name)
                } else if let type = candidate.portType, let kind = SinkClass.of(portType: type), kind == .headphones || kind == .headset {
                    pluggedPersonal[candidate.name] = candidate.label
                }
            }
        }
        self.unplugged = unplugged
        self.pluggedPersonal = pluggedPersonal
    }

    static func == (a: SinkRoutes, b: SinkRoutes) -> Bool {
        a.activeName == b.activeName && a.activeLabel == b.activeLabel && a.activeAvailable == b.activeAvailable
            && a.isAvailable == b.isAvailable && a.label == b.label && a.unplugged == b.unplugged && a.pluggedPersonal == b.pluggedPersonal
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(activeName)
        hasher.combine(activeLabel)
        hasher.combine(isAvailable)
        hasher.combine(unplugged)
    }
}

/// The sinks in one contiguous array (the scoring loop walks it) with lookups by id and name.
struct SinkTable: Sendable, Hashable {
    private(set) var features: [SinkFeatures] = []
    private var slotByID: [ObjectID: Int] = [:]
    private var slotByName: [String: Int] = [:]
    /// Every sink as (name, id), kept sorted as sinks come and go.
    private var nameOrder: [NameKey] = []
    /// Set when sinks come, go or are renamed; `rankNames()` then renumbers `nameRank`.
    private var nameRanksStale = true

    var count: Int { features.count }

    func slot(id: ObjectID) -> Int? { slotByID[id] }

    func slot(named name: String) -> Int? { slotByName[name] }

    func contains(named name: String) -> Bool { slot(named: name) != nil }

    subscript(slot: Int) -> SinkFeatures { features[slot] }

    mutating func upsert(_ sink: SinkFeatures) {
        var sink = sink
        if let slot = slotByID[sink.id], features[slot].name == sink.name {
            sink.nameRank = features[slot].nameRank
        } else {
            if let slot = slotByID[sink.id] { removeName(NameKey(name: features[slot].name, id: sink.id)) }
            insertName(NameKey(name: sink.name, id: sink.id))
        }
        if let slot = slotByID[sink.id] {
            if features[slot].name != sink.name, slotByName[features[slot].name] == slot {
                slotByName[features[slot].name] = nil
            }
            features[slot] = sink
            slotByName[sink.name] = slot
        } else {
            slotByID[sink.id] = features.count
            slotByName[sink.name] = features.count
            features.append(sink)
        }
    }

    @discardableResult
    mutating func remove(id: ObjectID) -> SinkFeatures? {
        guard let slot = slotByID.removeValue(forKey: id) else { return nil }
        let removed = features[slot]
        removeName(NameKey(name: removed.name, id: id))
        if slotByName[removed.name] == slot { slotByName[removed.name] = nil }
        let last = features.removeLast()
        if slot < features.count {
            features[slot] = last
            slotByID[last.id] = slot
            if slotByName[last.name] == features.count { slotByName[last.name] = slot }
        }
        return removed
    }

    /// Renumbers `nameRank` from the sorted names, once per change of the sink set.
    mutating func rankNames() {
        guard nameRanksStale else { return }
        for (rank, key) in nameOrder.enumerated() {
            if let slot = slotByID[key.id] { features[slot].nameRank = rank }
        }
        nameRanksStale = false
    }

    private mutating func insertName(_ key: NameKey) {
        nameOrder.insert(key, at: position(of: key))
        nameRanksStale = true
    }

    private mutating func removeName(_ key: NameKey) {
        let index = position(of: key)
        if index < nameOrder.count, nameOrder[index] == key { nameOrder.remove(at: index) }
        nameRanksStale = true
    }

    /// Binary search: the first entry not below `key`.
    private func position(of key: NameKey) -> Int {
        var low = 0, high = nameOrder.count
        while low < high {
            let middle = (low + high) / 2
            if nameOrder[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

struct NameKey: Sendable, Hashable, Comparable {
    var name: String
    var id: ObjectID
    static func < (a: NameKey, b: NameKey) -> Bool { a.name != b.name ? a.name < b.name : a.id < b.id }
}
