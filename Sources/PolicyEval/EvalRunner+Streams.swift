import RoutingPolicy
import AudioGraph

/// The graph changes of `remove-stream` and `stream-target` lines, or why one cannot run: the
/// stream must be a capture stream in the graph then, and a target needs the `default`
/// metadata (a pw-dump of a session manager's graph has it).
extension EvalRunner {
    static func removal(ofStream id: ObjectID, in graph: Graph, fail: (String) -> EvalScriptError) throws(EvalScriptError) -> GraphChange {
        guard graph.nodes[id]?.isCaptureStream == true else { throw fail("remove-stream: \(notAStream(id, in: graph))") }
        return .removed(id)
    }

    static func target(ofStream id: ObjectID, key: String, value: String?, in graph: Graph, fail: (String) -> EvalScriptError) throws(EvalScriptError) -> GraphChange {
        guard graph.nodes[id]?.isCaptureStream == true else { throw fail("stream-target: \(notAStream(id, in: graph))") }
        guard let metadata = graph.defaultMetadata else {
            throw fail("stream-target: the graph has no \"default\" metadata object to hold the target")
        }
        return .metadataProperty(metadata: metadata.id, subject: id, key: key, type: nil, value: value)
    }

    private static func notAStream(_ id: ObjectID, in graph: Graph) -> String {
        "no capture stream with id \(id) in the graph at this point" + (describe(id, in: graph).map { " (it is \($0))" } ?? "")
    }
}
