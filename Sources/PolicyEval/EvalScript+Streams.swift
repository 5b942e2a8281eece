import RoutingPolicy
import AudioGraph

/// The script lines of capture streams (§8 calls): a stream starting and ending, and its
/// target in the `default` metadata. Streams are named by id: many share a `node.name`.
extension EvalScript {
    static let streamActions = ["add-stream", "remove-stream", "stream-target"]

    static let addStreamUsage =
        "add-stream takes {\"id\": <node id>} and optionally \"application\", \"role\", \"name\" (strings) and \"props\" (an object of extra properties)"
    static let streamTargetUsage =
        "stream-target takes {\"id\": <node id>, \"value\": \"<target>\" or null} and optionally \"key\": \"target.object\" (the default) or \"target.node\""

    /// The action of an `add-stream`, `remove-stream` or `stream-target` line.
    static func streamAction(_ verb: String, _ body: JSONValue, fail: (String) -> EvalScriptError) throws(EvalScriptError) -> EvalEvent.Action {
        guard case .object(let fields) = body else {
            throw fail(verb == "add-stream" ? addStreamUsage : verb == "remove-stream" ? "remove-stream takes {\"id\": <node id>}" : streamTargetUsage)
        }
        let id = try streamID(fields, verb: verb, fail: fail)
        switch verb {
        case "add-stream":
            return .addStream(try capturedStream(id, fields, fail: fail))
        case "remove-stream":
            if let unknown = fields.keys.sorted().first(where: { $0 != "id" }) {
                throw fail("remove-stream: unknown field \"\(unknown)\"; remove-stream takes {\"id\": <node id>}")
            }
            return .removeStream(id: id)
        default:
            if let unknown = fields.keys.sorted().first(where: { !["id", "key", "value"].contains($0) }) {
                throw fail("stream-target: unknown field \"\(unknown)\"; \(streamTargetUsage)")
            }
            var key = "target.object"
            switch fields["key"] {
            case nil: break
            case .string(let named)? where named == "target.object" || named == "target.node": key = named
            default: throw fail("stream-target: \"key\" must be \"target.object\" or \"target.node\"")
            }
            switch fields["value"] {
            case .string(let value)?: return .streamTarget(id: id, key: key, value: value)
            case .null?: return .streamTarget(id: id, key: key, value: nil)
            default: throw fail("stream-target: \"value\" must be a string, or null to remove the target; \(streamTargetUsage)")
            }
        }
    }

    private static func streamID(_ fields: [String: JSONValue], verb: String, fail: (String) -> EvalScriptError) throws(EvalScriptError) -> ObjectID {
        guard case .integer(let value)? = fields["id"], let id = ObjectID(exactly: value) else {
            throw fail("\(verb): \"id\" must be the stream's node id, a whole number from 0 to \(ObjectID.max)")
        }
        return id
    }

    /// A running capture stream (`Stream/Input/Audio`, one input port) as a recorder's node
    /// looks: `props` first, then the named fields over them.
    private static func capturedStream(_ id: ObjectID, _ fields: [String: JSONValue], fail: (String) -> EvalScriptError) throws(EvalScriptError) -> Node {
        var props: Properties = [:]
        if let unknown = fields.keys.sorted().first(where: { !["id", "application", "role", "name", "props"].contains($0) }) {
            throw fail("add-stream: unknown field \"\(unknown)\"; \(addStreamUsage)")
        }
        switch fields["props"] {
        case nil: break
        case .object(let extra)?:
            for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
                switch value {
                case .string(let text): props[key] = text
                case .integer(let number): props[key] = String(number)
                case .bool(let flag): props[key] = flag ? "true" : "false"
                default: throw fail("add-stream: props \"\(key)\" must be a string, a whole number or true/false")
                }
            }
        default: throw fail("add-stream: \"props\" must be an object of properties; \(addStreamUsage)")
        }
        for (field, key) in [("application", "application.name"), ("role", "media.role"), ("name", "node.name")] {
            switch fields[field] {
            case nil: break
            case .string(let text)?: props[key] = text
            default: throw fail("add-stream: \"\(field)\" must be a string")
            }
        }
        if let mediaClass = props["media.class"], mediaClass != "Stream/Input/Audio" {
            throw fail("add-stream: adds a capture stream (Stream/Input/Audio), not \(mediaClass); use add for other nodes")
        }
        props["media.class"] = "Stream/Input/Audio"
        props["node.name"] = props["node.name"] ?? props["application.name"] ?? "stream-\(id)"
        return Node(id: id, state: .running, props: props, inputPorts: 1, outputPorts: 0)
    }
}
