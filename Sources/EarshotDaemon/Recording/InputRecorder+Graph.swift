import AudioGraph
import RoutingPolicy

/// What a recording keeps of the policy's inputs, in `earshot eval`'s terms: nodes and devices
/// as they appear, nodes going by name (capture streams by id: they share names), the routes of
/// a device changing, a capture stream's target in the `default` metadata (§8 calls), a user's
/// pick. A later
/// change of an object's properties or state is left out (eval adds an id once; PipeWire 1.4
/// updates a stream's properties as it runs); ports, links and clients are not the policy's
/// inputs.
extension InputRecorder: GraphChangeObserver {
    var observedKinds: GraphChangeKinds { [.node, .device, .removed, .metadataProperty] }

    /// Read against the graph before the change: whether the object is new, what it was.
    func graphWillChange(_ change: GraphChange, in turn: GraphTurn) {
        guard isRecording else { return }
        let graph = turn.graph, now = turn.now
        switch change {
        case .node(let node) where graph.nodes[node.id] == nil:
            record("add", PwDumpEncoder.object(node), at: now)
            // A target the metadata held before the stream came (a restore): the replay's
            // stream gets it too.
            if node.isCaptureStream { recordTargets(of: node.id, in: graph, at: now) }
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
            if let node = graph.nodes[id], let line = Self.removal(of: node) { record(line.verb, line.body, at: now) }
        case .metadataProperty(let metadata, let subject, let key, _, let value):
            guard graph.metadata[metadata]?.name == "default", graph.nodes[subject]?.isCaptureStream == true else { return }
            for targetKey in Self.streamTargetKeys where key == targetKey || key == nil {
                // A cleared subject drops only the targets it had.
                guard key != nil || graph.metadata[metadata]?[subject, targetKey] != nil else { continue }
                record("stream-target", Self.streamTarget(subject, targetKey, key == nil ? nil : value), at: now)
            }
        default:
            break
        }
    }

    /// A node going: by name, a capture stream by id (streams share names).
    static func removal(of node: Node) -> (verb: String, body: JSONValue)? {
        if node.isCaptureStream { return ("remove-stream", .object(["id": .integer(Int64(node.id))])) }
        return node.name.map { ("remove", .object(["node": .string($0)])) }
    }

    /// The metadata keys that name a capture stream's source (WirePlumber 0.5, 0.4).
    static let streamTargetKeys = ["target.object", "target.node"]

    static func streamTarget(_ stream: ObjectID, _ key: String, _ value: String?) -> JSONValue {
        .object(["id": .integer(Int64(stream)), "key": .string(key), "value": value.map(JSONValue.string) ?? .null])
    }

    /// Each target `graph`'s `default` metadata holds for `stream`, as `stream-target` lines.
    private func recordTargets(of stream: ObjectID, in graph: Graph, at now: Milliseconds) {
        for key in Self.streamTargetKeys {
            if let entry = graph.defaultMetadata?[stream, key] { record("stream-target", Self.streamTarget(stream, key, entry.value), at: now) }
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
            if let line = Self.removal(of: node) { record(line.verb, line.body, at: now) }
        }
        for device in new.devices.values.sorted(by: { $0.id < $1.id }) {
            record("add", PwDumpEncoder.object(device), at: now)
        }
        for node in new.nodes.values.sorted(by: { $0.id < $1.id }) {
            record("add", PwDumpEncoder.object(node), at: now)
            if node.isCaptureStream { recordTargets(of: node.id, in: new, at: now) }
        }
    }
}
