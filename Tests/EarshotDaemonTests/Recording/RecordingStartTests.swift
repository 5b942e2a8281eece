import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// Issue 38: a recording started while the daemon does not know the default yet — before its
/// first graph (PipeWire not answered yet), or over a graph that names no default (WirePlumber
/// has not written one, the daemon's own write not echoed yet) — replays through `earshot
/// eval` to the defaults the daemon chose: the same default at the start, then the same
/// changes, no more (a loaded run of the live end-to-end test once replayed from an empty
/// graph, and gained a change).
@Suite("a recording started before the default is known", .timeLimit(.minutes(1)), .blockingCalls)
struct RecordingStartTests {
    typealias H = DaemonHarness

    static let config = "[timing]\noff-grace-ms = 0\n"

    enum Start: String, CaseIterable, CustomTestStringConvertible {
        /// Asked for before the daemon's first graph.
        case beforeFirstGraph
        /// Asked for once the daemon decided over a graph whose `default` metadata names no
        /// default, before its write comes back.
        case noDefaultNamed
        /// The same with no `default` metadata at all (the session manager is starting).
        case noDefaultMetadata

        var testDescription: String { rawValue }
    }

    /// Speakers and the headphones (registered off-head before the graph came), nothing named
    /// in the `default` metadata, or no such metadata.
    static func graph(metadata: Bool) -> Graph {
        var graph = H.graph(sessionManager: true)
        graph.apply(.metadataProperty(metadata: H.metadataID, subject: 0, key: Graph.configuredSinkKey, type: nil, value: nil))
        if !metadata { graph.apply(.removed(H.metadataID)) }
        #expect(graph.configuredDefaultSinkName == nil && graph.effectiveDefaultSinkName == nil)
        return graph
    }

    @Test("the replay starts at the daemon's default and makes the daemon's changes, no more", arguments: Start.allCases)
    func replaysAsDecided(start: Start) async throws {
        let h = try await H(config: Self.config)
        _ = await h.place("off-head", register: true)
        let recording: InputRecording
        switch start {
        case .beforeFirstGraph:
            let request = await h.daemon.requestRecording()
            #expect(await h.daemon.recordingRequests.count == 1, "asked for before the first graph: it waits for it")
            await h.connect(Self.graph(metadata: true))
            recording = try #require(await request.recording())
        case .noDefaultNamed, .noDefaultMetadata:
            await h.connect(Self.graph(metadata: start == .noDefaultNamed))
            // The daemon's decision is not in the graph yet (its write is not echoed, or
            // there is nothing to write it to).
            recording = try #require(await h.daemon.startRecording())
        }
        let decided = await h.decision?.defaultSink
        #expect(decided == H.speakers, "the headphones are off the head")
        let lines = Task {
            var lines: [JSONValue] = []
            for await line in recording.lines { lines.append(line) }
            return lines
        }

        // The daemon's changes from here, as it decides them.
        var daemonDefaults: [String?] = []
        var last = decided
        func step(_ body: () async -> Void) async {
            h.clock.advance(by: 100)
            await body()
            let now = await h.decision?.defaultSink
            if now != last { daemonDefaults.append(now) }
            last = now
        }
        if start == .noDefaultMetadata {
            // The session manager's metadata comes: the decision is written into it.
            await step { await h.changes(.metadata(Metadata(id: H.metadataID, props: ["metadata.name": "default"]))) }
        }
        await step { await h.echo() }
        await step {
            _ = await h.place("on-head")
            await h.echo()
        }
        // The speakers picked by hand.
        await step { await h.changes(H.defaultWritten(H.speakers)) }
        await step {
            _ = await h.place("off-head")
            await h.echo()
        }
        await step {
            _ = await h.place("on-head")
            await h.echo()
        }
        await step {
            _ = await h.place("off-head")
            await h.echo()
        }
        #expect(daemonDefaults == [H.headphones, H.speakers, H.headphones, H.speakers])
        await h.stop()
        let recorded = await lines.value.map(\.canonicalText).joined(separator: "\n")

        let replayGraph = try PwDumpDecoder.decode(Data(recording.graph.canonicalText.utf8))
        #expect(replayGraph.sinks.count == 2, "the graph the daemon decided from, not the empty one before it")
        let config = try PolicyConfigLoader.parse(Self.config, file: "earshot.toml")
        var replayed: [Decision] = []
        try EvalRunner.run(graph: replayGraph, config: config, hostAddresses: [], events: try EvalScript.parse(recorded, source: "events.jsonl")) {
            decision, _ in replayed.append(decision)
        }
        // Checkpoint 0: where the daemon stood.
        #expect(replayed.first?.defaultSink == decided, "\(recorded)")
        #expect(replayed.filter(\.changed).map(\.defaultSink) == daemonDefaults, "\(recorded)")
        #expect(replayed.last?.defaultSink == last)
    }

    @Test("a graph that names the decisions already is recorded as it is")
    func namedGraphUnchanged() async throws {
        let h = try await H(config: Self.config)
        _ = await h.place("off-head", register: true)
        await h.connect(H.graph(sessionManager: true))
        let recording = try #require(await h.daemon.startRecording())
        let live = await h.daemon.engine.graph
        #expect(recording.graph == PwDumpEncoder.encode(live))
        await h.stop()
        for await _ in recording.lines {}
    }

    @Test("asked for before the first graph: nothing begins for a request given up, and the daemon stopping answers the others")
    func requestsBeforeTheFirstGraph() async throws {
        let h = try await H()
        let given = await h.daemon.requestRecording()
        let waiting = await h.daemon.requestRecording()
        let asker = Task { await given.recording() }
        asker.cancel()
        #expect(await asker.value == nil)
        #expect(given.isAbandoned)
        // More than may run are refused at once (the one given up no longer counts).
        var requests = [waiting]
        for _ in 1..<InputRecorder.maximumRecordings { requests.append(await h.daemon.requestRecording()) }
        let refused = await h.daemon.requestRecording()
        #expect(await refused.recording() == nil)
        #expect(await h.daemon.recordingRequests.count == InputRecorder.maximumRecordings)
        await h.stop()
        for request in requests { #expect(await request.recording() == nil) }
        #expect(!h.daemon.events.recorder.isRecording)
    }
}
