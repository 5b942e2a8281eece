import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// Issue 32 in `earshot eval`: scripts add and remove capture streams and set their targets,
/// `expect` a stream's source; decisions carry `calls` (JSON and text); `--against` says where
/// calls record from differently.
struct EvalCallsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let loopback = CallsOnlyInputTests.loopback
    static let laptopMicrophone = CallsOnlyInputTests.laptopMicrophone

    static func inputs() throws -> (Graph, [EvalEvent]) {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL(CallsOnlyInputTests.sof))
        let text = try String(contentsOf: repository.appendingPathComponent("docs/examples/calls.jsonl"), encoding: .utf8)
        return (graph, try EvalScript.parse(text, source: "calls.jsonl"))
    }

    /// Every decision of the example with its event's line, and the failed expectations.
    static func run(_ config: PolicyConfig = PolicyConfig()) throws -> (decisions: [(Decision, Int?)], failures: [ExpectationFailure]) {
        let (graph, events) = try inputs()
        var decisions: [(Decision, Int?)] = []
        var checker = EvalExpectationChecker()
        var failures: [ExpectationFailure] = []
        try EvalRunner.run(graph: graph, config: config, hostAddresses: [], events: events) { decision, event in
            failures += checker.observe(decision, event: event)
            decisions.append((decision, event?.line))
        }
        return (decisions, failures + checker.finish())
    }

    static func outcome(_ json: String) throws -> CallRoutingOutcome {
        try JSONDecoder().decode(CallRoutingOutcome.self, from: Data(json.utf8))
    }

    static func always() throws -> PolicyConfig { try PolicyConfigLoader.parse("[input]\nbluetooth-microphone = \"always\"\n", file: "always.toml") }

    @Test("docs/examples/calls.jsonl over the real SOF capture: the laptop microphone stays the default source, calls go to the headset and come back, a stale target goes")
    func exampleHolds() throws {
        let (decisions, failures) = try Self.run()
        #expect(failures.isEmpty, "\(failures.map { $0.textLines(detail: .summary).joined(separator: "\n") })")
        let moves = decisions.flatMap { $0.0.calls?.moves ?? [] }.map { "\($0.kind) #\($0.stream) \($0.to ?? "default")" }
        #expect(moves == [
            "call #401 \(Self.loopback)", "call #402 \(Self.loopback)", "back #401 default", "back #402 default", "stale-target #403 default",
        ])
        #expect(decisions.allSatisfy { $0.0.defaultSource == Self.laptopMicrophone || $0.1 == nil }, "no event makes the headset the default source")
    }

    @Test("the decision's JSON carries calls as its wire record, null when calls are not routed")
    func jsonCarriesCalls() throws {
        let (decisions, _) = try Self.run()
        let call = try #require(decisions.first { $0.0.calls?.streams.count == 2 })
        let json = try JSONValue.parse(DecisionRecord(call.0, line: call.1).jsonLine)
        let calls = try #require(json["calls"])
        #expect(calls["source"] == .string(Self.loopback))
        #expect(calls["streams"]?.canonicalText.contains(#""why":"application.name \"Chromium input\" is in call-applications""#) == true)
        #expect(calls["moves"] == .array([
            .object([
                "kind": .string("call"), "stream": .integer(402), "serial": .null, "application": .string("Chromium input"), "role": .null, "from": .null,
                "to": .string(Self.loopback),
            ])
        ]))
        #expect(try DecisionRecord(json: json).calls == call.0.calls, "it decodes back")

        let (unrouted, _) = try Self.run(try Self.always())
        let record = try JSONValue.parse(DecisionRecord(try #require(unrouted.last?.0)).jsonLine)
        #expect(record["calls"] == .null, "written as null, never left out")
    }

    @Test("text: a calls line under the input with the pointed streams, a line per move; none without calls")
    func textLines() throws {
        // As the wire gives it (the records' memberwise inits are the engine's).
        let outcome = try Self.outcome(
            #"{"source":"\#(Self.loopback)","streams":[{"stream":401,"serial":7,"application":"Some Softphone","role":"Communication","why":"media.role = Communication","source":"\#(Self.loopback)"},"#
                + #"{"stream":405,"serial":null,"application":null,"role":"Communication","why":"media.role = Communication","source":"\#(Self.loopback)"}],"#
                + #""moves":[{"kind":"call","stream":401,"serial":7,"application":"Some Softphone","role":"Communication","from":null,"to":"\#(Self.loopback)"}]}"#)
        #expect(DecisionText.callsLines(outcome) == [
            "calls → \(Self.loopback) (keeps A2DP: calls only); 2 pointed: #401 Some Softphone (media.role = Communication), #405 Communication (media.role = Communication)",
            "  stream #401 Some Softphone → \(Self.loopback) (call)",
        ])
        let back = try Self.outcome(
            #"{"source":null,"streams":[],"moves":[{"kind":"stale-target","stream":403,"serial":null,"application":"x","role":null,"from":"\#(Self.loopback)","to":null}]}"#)
        #expect(DecisionText.callsLines(back) == ["calls → default source; none pointed", "  stream #403 x → default source (stale-target)"])
        #expect(DecisionText.callsLines(CallRoutingOutcome(source: nil)).isEmpty)

        let (decisions, _) = try Self.run()
        let rendered = decisions.map { DecisionText.render($0.0, detail: .summary) }
        #expect(rendered.contains { $0.contains("\n          calls → \(Self.loopback) (keeps A2DP: calls only); 1 pointed: #401 Some Softphone") })
        let (unrouted, _) = try Self.run(try Self.always())
        #expect(!unrouted.contains { DecisionText.render($0.0, detail: .full).contains("calls →") })
    }

    static let badLines: [(String, String)] = [
        (#"{"at":1,"add-stream":{"application":"x"}}"#, "add-stream: \"id\" must be the stream's node id"),
        (#"{"at":1,"add-stream":{"id":-1}}"#, "add-stream: \"id\" must be the stream's node id"),
        (#"{"at":1,"add-stream":{"id":401,"app":"x"}}"#, "add-stream: unknown field \"app\""),
        (#"{"at":1,"add-stream":{"id":401,"role":5}}"#, "add-stream: \"role\" must be a string"),
        (#"{"at":1,"add-stream":{"id":401,"props":{"a":[1]}}}"#, "add-stream: props \"a\" must be a string"),
        (#"{"at":1,"add-stream":{"id":401,"props":{"media.class":"Audio/Source"}}}"#, "adds a capture stream (Stream/Input/Audio), not Audio/Source"),
        (#"{"at":1,"add-stream":[401]}"#, "add-stream takes {\"id\""),
        (#"{"at":1,"remove-stream":{"id":401,"node":"x"}}"#, "remove-stream: unknown field \"node\""),
        (#"{"at":1,"remove-stream":{"node":"x"}}"#, "remove-stream: \"id\" must be"),
        (#"{"at":1,"stream-target":{"id":401}}"#, "stream-target: \"value\" must be a string, or null"),
        (#"{"at":1,"stream-target":{"id":401,"key":"node.target","value":"x"}}"#, "stream-target: \"key\" must be \"target.object\" or \"target.node\""),
        (#"{"at":1,"select":{"node":"x"},"expect":{"stream-source":{"stream":401}}}"#, "expect: \"stream-source\" must be {\"stream\""),
        (#"{"at":1,"select":{"node":"x"},"expect":{"stream-source":"x"}}"#, "expect: \"stream-source\" must be {\"stream\""),
    ]

    @Test(arguments: badLines)
    func badStreamLinesAreRefusedWithTheirLine(_ line: String, _ message: String) {
        EvalExpectationTests.expectRefusedOnItsLine(line, message)
    }

    @Test("lines that name no capture stream, or an id in use, are refused when they run")
    func unrunnableLines() throws {
        let graph = try PwDumpDecoder.decode(contentsOf: fixtureURL(CallsOnlyInputTests.sof))
        let sourceID = try #require(graph.node(named: Self.laptopMicrophone)?.id)
        let cases: [(String, String)] = [
            (#"{"at":1,"remove-stream":{"id":401}}"#, "remove-stream: no capture stream with id 401 in the graph at this point"),
            (#"{"at":1,"stream-target":{"id":\#(sourceID),"value":"x"}}"#, "stream-target: no capture stream with id \(sourceID) in the graph at this point (it is node \"\(Self.laptopMicrophone)\")"),
            (#"{"at":1,"add-stream":{"id":\#(sourceID)}}"#, "add-stream: id \(sourceID) is already in the graph"),
        ]
        for (line, message) in cases {
            let events = try EvalScript.parse(line, source: "e.jsonl")
            #expect {
                try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [], events: events, source: "e.jsonl") { _, _ in }
            } throws: { error in
                (error as? EvalScriptError)?.description.hasPrefix("e.jsonl:1: " + message) == true
            }
        }
        var bare = graph
        for id in graph.metadata.keys { bare.apply(.removed(id)) }
        let target = try EvalScript.parse(#"{"at":1,"add-stream":{"id":401}}"# + "\n" + #"{"at":2,"stream-target":{"id":401,"value":"x"}}"#)
        #expect {
            try EvalRunner.run(graph: bare, config: PolicyConfig(), hostAddresses: [], events: target) { _, _ in }
        } throws: { error in
            (error as? EvalScriptError)?.message == "stream-target: the graph has no \"default\" metadata object to hold the target"
        }
    }

    @Test("a failed stream-source says where the stream records from, in text and JSON")
    func failedStreamSource() throws {
        let (graph, _) = try Self.inputs()
        let script = [
            #"{"at":0,"register":{"accessory":"AC:80:0A:CA:97:12","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"in-ear"}}"#,
            #"{"at":10,"add-stream":{"id":401,"role":"Communication"},"expect":{"stream-source":{"stream":401,"source":"default"}}}"#,
            #"{"at":20,"add-stream":{"id":400,"application":"pw-record"},"expect":{"stream-source":{"stream":400,"source":"\#(Self.loopback)"}}}"#,
        ].joined(separator: "\n")
        var checker = EvalExpectationChecker()
        var failures: [ExpectationFailure] = []
        try EvalRunner.run(graph: graph, config: PolicyConfig(), hostAddresses: [], events: try EvalScript.parse(script)) { decision, event in
            failures += checker.observe(decision, event: event)
        }
        failures += checker.finish()
        try #require(failures.count == 2)
        #expect(failures[0].textLines(detail: .summary)[0]
            == "✗ expectation failed, line 2 (10 ms): expected stream-source #401 the default source; stream #401 records from \(Self.loopback) (pointed) (settled at 10 ms, change stream-401)")
        #expect(failures[1].textLines(detail: .summary)[0].hasPrefix(
            "✗ expectation failed, line 3 (20 ms): expected stream-source #400 \(Self.loopback); stream #400 records from the default source ("))
        let json = try JSONValue.parse(failures[0].jsonLine)
        #expect(json["expectation-failed"]?["expected"] == .object(["stream-source": .object(["stream": .integer(401), "source": .null])]))
        #expect(json["expectation-failed"]?["decision"]?["calls"]?["streams"]?.canonicalText.contains(#""stream":401"#) == true)
    }

    @Test("--against says where calls record from differently, as direction calls")
    func againstReportsCalls() throws {
        let (graph, events) = try Self.inputs()
        let outcome = try EvalDiff.run(graph: graph, old: try Self.always(), new: PolicyConfig(), hostAddresses: [], events: events)
        let calls = outcome.differences.filter { $0.direction == .calls }
        #expect(calls.first?.line == 5 && calls.first?.old.default == nil && calls.first?.new.default == Self.loopback)
        let json = try JSONValue.parse(try #require(calls.first).jsonLine)
        #expect(json["direction"] == .string("calls") && json["old"]?["default"] == .null && json["new"]?["winner"] == .null)
        let text = EvalDiffText.render(calls)
        #expect(text.count == 1 + calls.count, "a row each, no old/new lines: calls have no ranking")
        #expect(text[1].contains("calls · default source → \(Self.loopback)  -"))
        #expect(try EvalDiff.run(graph: graph, old: PolicyConfig(), new: PolicyConfig(), hostAddresses: [], events: events).differences.isEmpty)
    }
}
