import AudioGraph
import Foundation
import Logging
import PolicyEval
import RoutingPolicy
import Testing

@testable import EarshotDaemon

/// Issue 32: a recording of calls (capture streams coming and going, their targets in the
/// metadata) replays in `earshot eval` to the same calls decisions the daemon made.
struct CallRecordingReplayTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RoutingPolicyTests/Fixtures/real/sof-laptop-hdmi-unplugged-bt-a2dp-pw1.4.8.json")
    static let headset = AccessoryIdentity(parsing: "AC:80:0A:CA:97:12")!
    static let loopback = "bluez_input.AC:80:0A:CA:97:12"
    /// The fixture's `default` metadata.
    static let defaultMetadata: ObjectID = 39

    static func stream(_ id: ObjectID, _ props: Properties) -> Node {
        var all = props
        all["media.class"] = "Stream/Input/Audio"
        all["object.serial"] = String(5000 + id)
        all["node.name"] = all["node.name"] ?? all["application.name"]
        return Node(id: id, state: .running, props: all, inputPorts: 1, outputPorts: 0)
    }

    enum Step {
        case accessory(AccessoryRequest)
        case graph(GraphChange)
    }

    static func target(_ stream: ObjectID, _ value: String?) -> Step {
        .graph(.metadataProperty(metadata: defaultMetadata, subject: stream, key: "target.object", type: nil, value: value))
    }

    /// Worn; pw-record and two calls (two streams named "Chromium input": one goes, by id);
    /// Earshot's own target write seen back; off; a call whose target the session manager
    /// restores (a stale target); a target cleared with the subject.
    static let steps: [(at: Milliseconds, step: Step)] = [
        (10, .accessory(.register(headset, reporter: "org.example.reporter", AccessoryConfiguration(capabilities: AccessoryCapabilities([.audioSwitching, .placement]), placement: .inEar)))),
        (100, .graph(.node(stream(400, ["application.name": "pw-record", "media.role": "Music"])))),
        (200, .graph(.node(stream(401, ["application.name": "Some Softphone", "media.role": "Communication"])))),
        (210, target(401, loopback)),
        (300, .graph(.node(stream(402, ["application.name": "Chromium input"])))),
        (310, .graph(.node(stream(404, ["application.name": "Chromium input"])))),
        (400, .graph(.removed(404))),
        (500, .accessory(.update(headset, AccessoryUpdate(placement: .set(.offHead))))),
        (1000, target(401, nil)),
        (2000, .graph(.node(stream(403, ["application.name": "Some Softphone", "media.role": "Communication"])))),
        (2010, target(403, loopback)),
        (2100, .graph(.metadataProperty(metadata: defaultMetadata, subject: 403, key: nil, type: nil, value: nil))),
    ]

    @Test("a recording of calls replays to the same calls, move by move")
    func replaysTheSameCalls() async throws {
        let graph = try PwDumpDecoder.decode(contentsOf: Self.fixture)
        var engine = PolicyEngine(graph: graph, config: PolicyConfig())
        engine.holdCurrentDefault()
        let recorder = InputRecorder()
        let lines = try #require(recorder.begin(at: 0))
        let recordedGraph = PwDumpEncoder.encode(engine.graph)
        var live = [engine.handle(.start, at: 0).decision]
        let session = GraphSession(logger: Logger(label: "test"))
        for (at, step) in Self.steps {
            PolicyRun.fireTimers(&engine, upTo: at) { decision, _ in live.append(decision) }
            switch step {
            case .accessory(let request):
                live.append(engine.handle(.accessory(request), at: at).decision)
                recorder.recordAccepted(request, at: at)
            case .graph(let change):
                recorder.graphWillChange(change, in: GraphTurn(graph: engine.graph, session: session, currentDefault: nil, currentSource: nil, now: at))
                live.append(engine.handle(.graphChanged(change), at: at).decision)
            }
        }
        PolicyRun.fireTimers(&engine, upTo: .max) { decision, _ in live.append(decision) }
        recorder.close()
        var recorded: [String] = []
        for await line in lines { recorded.append(line.canonicalText) }
        #expect(recorded.contains(#"{"at":400,"remove-stream":{"id":404}}"#), "a stream goes by id: 402 has the same name")
        #expect(recorded.contains(#"{"at":2100,"stream-target":{"id":403,"key":"target.object","value":null}}"#), "a cleared subject drops its target")
        #expect(live.contains { $0.calls?.moves.contains { move in move.kind.known == StreamMove.Kind.staleTarget } == true }, "the scenario has a stale target")

        let events = try EvalScript.parse(recorded.joined(separator: "\n"), source: "events.jsonl")
        let replayGraph = try PwDumpDecoder.decode(Data(recordedGraph.canonicalText.utf8))
        var replayed: [Decision] = []
        try EvalRunner.run(graph: replayGraph, config: PolicyConfig(), hostAddresses: [], events: events) { decision, _ in replayed.append(decision) }
        #expect(replayed.map(\.at) == live.map(\.at))
        #expect(replayed.map(\.calls) == live.map(\.calls))
        #expect(replayed.map(\.defaultSource) == live.map(\.defaultSource))
    }
}
