import AudioGraph
import RoutingPolicy

/// What a recording keeps of the policy's inputs, in `earshot eval`'s terms: nodes and devices
/// as they appear, nodes going by name, the routes of a device changing, a user's pick. A later
/// change of an object's properties or state is left out (eval adds an id once; PipeWire 1.4
/// updates a stream's properties as it runs); ports, links and clients are not the policy's
/// inputs.
extension InputRecorder: GraphChangeObserver {
    var observedKinds: GraphChangeKinds { [.node, .device, .removed] }

    /// Read against the graph before the change: whether the object is new, what it was.
    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {
        guard isRecording else { return }
        let graph = turn.graph, now = turn.now
        switch change {
        case .node(let node) where graph.nodes[node.id] == nil:
            record("add", PwDumpEncoder.object(node), at: now)
        case .node(let node):
            // A sink or source appears before its ports (the session manager configures them):
            // the node again once it has them, which eval takes as an update of the same node
            // (else the replay would hold it out as `no-ports` for good).
            guard let old = graph.nodes[node.id], old.name == node.name else { return }
            let portsCame = node.isAudioSink ? (old.inputPorts ?? 0) == 0 && (node.inputPorts ?? 0) > 0
                : node.isAudioSource && (old.outputPorts ?? 0) == 0 && (node.outputPorts ?? 0) > 0
            if portsCame { record("add", PwDumpEncoder.object(node), at: now) }
        case .device(let device) where graph.devices[device.id] == nil:
            record("add", PwDumpEncoder.object(device), at: now)
        case .device(let device):
            // A jack or a monitor: each route whose availability or activity changed, as the
            // `route` event eval replays (a device first seen without routes gets them here).
            guard let name = device.props["device.name"], let routes = device.routes else { return }
            guard let before = graph.devices[device.id]?.routes else {
                // The routes came after the device (they are read once its info is in): the
                // device again, which eval takes as an update of the same device.
                record("add", PwDumpEncoder.object(device), at: now)
                return
            }
            for change in before.changes(to: routes) {
                var body: [String: JSONValue] = [
                    "device": .string(name), "route": .string(change.name), "available": .string(change.available.rawValue),
                ]
                if change.active { body["active"] = .bool(true) }
                record("route", .object(body), at: now)
            }
        case .removed(let id):
            guard let name = graph.nodes[id]?.name else { return }
            record("remove", .object(["node": .string(name)]), at: now)
        default:
            break
        }
    }

    /// A user's pick the engine took (an observer found it in a graph change).
    func recordPick(_ pick: PolicyInput, at now: Milliseconds) {
        guard isRecording else { return }
        switch pick {
        case .userSelectedDefault(let name): record("select", .object(["node": .string(name)]), at: now)
        case .userSelectedSource(let name): record("select-source", .object(["node": .string(name)]), at: now)
        default: break
        }
    }

    /// A control request the engine accepted, as the client sent it.
    func recordAccepted(_ request: AccessoryRequest, at now: Milliseconds) {
        guard isRecording else { return }
        let (verb, body) = AccessoryRequestEncoder.encode(request)
        record(verb, body, at: now)
    }

    /// A (re)connection replaces the graph: a recording says so as every node of the old one
    /// leaving, then every node and device of the new one arriving (ids are PipeWire's anew).
    func recordReplacement(of old: Graph, by new: Graph, at now: Milliseconds) {
        guard isRecording else { return }
        for node in old.nodes.values.sorted(by: { $0.id < $1.id }) {
            if let name = node.name { record("remove", .object(["node": .string(name)]), at: now) }
        }
        for device in new.devices.values.sorted(by: { $0.id < $1.id }) {
            record("add", PwDumpEncoder.object(device), at: now)
        }
        for node in new.nodes.values.sorted(by: { $0.id < $1.id }) {
            record("add", PwDumpEncoder.object(node), at: now)
        }
    }
}
