import RoutingPolicy
import AudioGraph

/// `earshot eval` without the I/O: a graph, a config and a script in, one decision per event
/// and per fired timer out.
public enum EvalRunner {
    public static func run(
        graph: Graph, config: PolicyConfig, hostAddresses: [BluetoothAddress], events: [EvalEvent], source: String = "<events>",
        onDecision: (Decision, EvalEvent?) -> Void
    ) throws(EvalScriptError) {
        var engine = PolicyEngine(graph: graph, config: config, hostAddresses: hostAddresses)
        // As the daemon starts: the default found holds (docs/policy.md §5).
        engine.holdCurrentDefault()
        var players: [String: PlaybackPreview.Player] = [:]
        var previous: Decision?
        // Each decision with what its departure would pause and hold (§7), from the graph it
        // was decided over and the players the script declared.
        func decided(_ decision: Decision, _ event: EvalEvent?, in graph: Graph) {
            var decision = decision
            if let departure = PlaybackDeparture.of(decision, after: previous, config: decision.config.playback) {
                decision.playback = PlaybackPreview.of(departure, graph: graph, players: players.keys.sorted().compactMap { players[$0] }, config: decision.config)
            }
            previous = decision
            onDecision(decision, event)
        }
        decided(engine.handle(.start, at: 0).decision, nil, in: engine.graph)
        for event in events {
            while let due = engine.nextDeadline, due <= event.at { decided(engine.handle(.timerFired, at: due).decision, nil, in: engine.graph) }
            let before = engine.graph
            let outcome: PolicyOutcome
            func fail(_ message: String) -> EvalScriptError { EvalScriptError(source: source, line: event.line, message: message) }
            switch event.action {
            case .accessory(let verb, let subject, .failure(let error)):
                outcome = engine.refused(error, verb: verb, subject: subject, at: event.at)
            case .accessory(_, _, .success(let request)):
                outcome = engine.handle(.accessory(request), at: event.at)
            case .add(let change):
                try Self.checkNew(change, verb: "add", in: engine.graph, line: event.line, source: source)
                outcome = engine.handle(.graphChanged(change), at: event.at)
            case .addStream(let stream):
                try Self.checkNew(.node(stream), verb: "add-stream", in: engine.graph, line: event.line, source: source)
                outcome = engine.handle(.graphChanged(.node(stream)), at: event.at)
            case .removeStream(let id):
                outcome = engine.handle(.graphChanged(try Self.removal(ofStream: id, in: engine.graph, fail: fail)), at: event.at)
            case .streamTarget(let id, let key, let value):
                outcome = engine.handle(.graphChanged(try Self.target(ofStream: id, key: key, value: value, in: engine.graph, fail: fail)), at: event.at)
            case .remove(let name):
                guard let node = engine.graph.node(named: name) else {
                    throw EvalScriptError(source: source, line: event.line, message: "remove: no node named \"\(name)\" in the graph at this point")
                }
                outcome = engine.handle(.graphChanged(.removed(node.id)), at: event.at)
            case .route(let deviceName, let routeName, let available, let active):
                guard let device = engine.graph.devices.values.filter({ $0.props["device.name"] == deviceName }).min(by: { $0.id < $1.id }) else {
                    throw EvalScriptError(source: source, line: event.line, message: "route: no device named \"\(deviceName)\" (device.name) in the graph at this point")
                }
                guard let routes = device.routes else {
                    throw EvalScriptError(source: source, line: event.line, message: "route: device \"\(deviceName)\" has no routes (no EnumRoute/Route params)")
                }
                guard let changed = routes.setting(routeName, available: available, activate: active) else {
                    let names = routes.all.map(\.name).joined(separator: ", ")
                    throw EvalScriptError(source: source, line: event.line, message: "route: device \"\(deviceName)\" has no route \"\(routeName)\" (it has \(names.isEmpty ? "none" : names))")
                }
                var updated = device
                updated.routes = changed
                outcome = engine.handle(.graphChanged(.device(updated)), at: event.at)
            case .select(let name):
                guard engine.graph.node(named: name) != nil else {
                    throw EvalScriptError(source: source, line: event.line, message: "select: no node named \"\(name)\" in the graph at this point")
                }
                outcome = engine.handle(.userSelectedDefault(name), at: event.at)
            case .selectSource(let name):
                guard engine.graph.node(named: name) != nil else {
                    throw EvalScriptError(source: source, line: event.line, message: "select-source: no node named \"\(name)\" in the graph at this point")
                }
                outcome = engine.handle(.userSelectedSource(name), at: event.at)
            case .addPlayer(let player):
                guard players[player.name] != nil || players.count < Self.playerLimit else {
                    throw fail("add-player: at most \(Self.playerLimit) players")
                }
                players[player.name] = player
                continue
            }
            // A sink that went took its links along: its streams are read from before.
            decided(outcome.decision, event, in: Self.isRemoval(event) ? before : engine.graph)
        }
        while let due = engine.nextDeadline { decided(engine.handle(.timerFired, at: due).decision, nil, in: engine.graph) }
    }

    /// The most players a script declares.
    static let playerLimit = 1024

    private static func isRemoval(_ event: EvalEvent) -> Bool {
        if case .remove = event.action { return true }
        return false
    }

    /// A new object: an id in use would silently replace another object.
    private static func checkNew(_ change: GraphChange, verb: String, in graph: Graph, line: Int, source: String) throws(EvalScriptError) {
        if let id = objectID(of: change), let existing = describe(id, in: graph), !isSameObject(change, in: graph) {
            throw EvalScriptError(source: source, line: line, message: "\(verb): id \(id) is already in the graph (\(existing)); use an unused id, or remove it first")
        }
    }

    private static func objectID(of change: GraphChange) -> ObjectID? {
        switch change {
        case .node(let node): node.id
        case .device(let device): device.id
        default: nil
        }
    }

    /// An `add` of a device or node already in the graph under the same id and name
    /// (`device.name`, `node.name`) updates it: a recording writes a device again when its
    /// routes come after it, and a sink or source again when its ports come after it.
    private static func isSameObject(_ change: GraphChange, in graph: Graph) -> Bool {
        switch change {
        case .device(let device):
            guard let name = device.props["device.name"] else { return false }
            return graph.devices[device.id]?.props["device.name"] == name
        case .node(let node):
            guard let name = node.name else { return false }
            return graph.nodes[node.id]?.name == name
        default:
            return false
        }
    }

    /// What holds `id` now, if anything (PipeWire ids are shared by every object type).
    static func describe(_ id: ObjectID, in graph: Graph) -> String? {
        if let node = graph.nodes[id] { return "node \"\(node.name ?? "?")\"" }
        if graph.devices[id] != nil { return "a device" }
        if graph.ports[id] != nil { return "a port" }
        if graph.links[id] != nil { return "a link" }
        if graph.clients[id] != nil { return "a client" }
        if graph.metadata[id] != nil { return "a metadata object" }
        return nil
    }
}
