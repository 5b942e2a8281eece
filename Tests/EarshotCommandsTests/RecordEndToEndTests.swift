import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// `earshot record` on a live session (real PipeWire + WirePlumber + mpv): placement changes,
/// a default picked by hand, a sink arriving and leaving. Replaying the recording with the
/// config the daemon ran gives, at every checkpoint, the default the daemon chose.
@Suite("earshot record end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct RecordEndToEndTests {
    typealias D = DaemonFixture

    @Test("a live session recorded with earshot record replays through earshot eval to the same defaults, change by change")
    func recordAndReplay() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            // No off-grace: each off-head is a transition at once (the replay runs the same config).
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 0\n")
            let config = sandbox.configDir.appendingPathComponent("earshot/earshot.toml").path
            let (player, mpv) = try await sandbox.startPlayer()
            defer { player.stop() }
            let daemon = try D.start(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "off-head")
            let events = try EventSubscription(socket: daemon.socketPath)
            // Recorded at once: the daemon may not have its first graph yet, nor know the
            // default (WirePlumber's, or its own write not yet echoed). The recording begins
            // with that graph and names the default the daemon decided (issue 38: one begun
            // from the empty graph before it replayed from no default, and gained a change).
            let directory = sandbox.root.appendingPathComponent("recording").path
            let recorder = try sandbox.spawn("earshot-record", [daemon.binary, "record", "--output", directory, "--socket", daemon.socketPath])
            defer { recorder.stop() }
            try await recorder.waitForLog(containing: "recording to")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])

            var daemonDefaults: [String] = []
            func route(to sink: String) async throws {
                let change = try await events.next("route-change") { $0["current"] == .string(sink) }
                daemonDefaults.append(sink)
                _ = change
            }
            try daemon.place("on-head")
            try await route(to: D.headphones)
            // A default picked by hand: followed, not fought.
            let speakers = try #require(sandbox.observer.snapshot().node(named: D.speakers))
            #expect(try await offPool { try sandbox.run(["wpctl", "set-default", String(speakers.id)]) }.status == 0)
            try await route(to: D.speakers)
            // A placement transition ends the override.
            try daemon.place("off-head")
            _ = try await events.next("accessory") { $0["configuration"]?["placement"] == .string("off-head") }
            try daemon.place("on-head")
            try await route(to: D.headphones)
            // A sink arrives (a USB DAC) and leaves.
            let dac = VirtualSink(name: "alsa_output.usb-Sandbox_DAC-00.analog-stereo", description: "Sandbox DAC", formFactor: "speaker", bus: "usb")
            _ = try await sandbox.createSink(dac)
            _ = try? await events.next("route-change", timeout: .seconds(2))
            try await sandbox.destroySink(named: dac.name)
            try daemon.place("off-head")
            try await route(to: D.speakers)
            let finalStatus = try daemon.earshot("status", "--json").output

            recorder.signal(SIGINT)
            _ = recorder.waitForExit(timeout: .seconds(10))
            let graph = "\(directory)/graph.json", script = "\(directory)/events.jsonl"
            #expect(FileManager.default.fileExists(atPath: graph) && FileManager.default.fileExists(atPath: script))
            let replay = try daemon.earshot("eval", "--graph", graph, "--events", script, "--config", config, "--format", "json")
            #expect(replay.status == 0, "\(replay.output)")
            let decisions = replay.output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            // Checkpoint 0: the replay starts where the daemon was.
            #expect(decisions.first?["default"] == .string(D.speakers))
            // Every change the daemon made, the replay made too, in order (no more, no fewer).
            let replayed = decisions.filter { $0["changed"] == .bool(true) }.compactMap { decision -> String? in if case .string(let name)? = decision["default"] { name } else { nil } }
            let collapsed = daemonDefaults.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
            let recorded = (try? String(contentsOfFile: script, encoding: .utf8)) ?? ""
            #expect(replayed.filter { $0 != "alsa_output.usb-Sandbox_DAC-00.analog-stereo" } == collapsed, "replay \(replayed), daemon \(daemonDefaults)\n\(recorded)")
            // The last checkpoint: the daemon's default now.
            let status = try JSONValue.parse(finalStatus)
            #expect(decisions.last?["default"] == status["decision"]?["default"])
        }
    }

    @Test("earshot record asked for before the daemon reaches PipeWire: the recording begins with its first graph and replays from the default it holds")
    func recordingBeforeTheFirstGraph() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 0\n")
            let config = sandbox.configDir.appendingPathComponent("earshot/earshot.toml").path
            let (player, mpv) = try await sandbox.startPlayer()
            defer { player.stop() }
            // The session is up and playing (WirePlumber chose the default) before the daemon
            // can reach it: its remote is a socket path that does not exist yet.
            _ = try await sandbox.observer.waitUntil("mpv linked by WirePlumber to its default") { graph in
                guard let sink = graph.effectiveDefaultSinkName, let node = graph.node(named: sink) else { return false }
                return graph.linkedTargets(of: mpv.id).map(\.id) == [node.id]
            }
            let remote = sandbox.runtimeDir.appendingPathComponent("pipewire-later").path
            let daemon = try D.start(in: sandbox, arguments: ["--remote", remote])
            defer { daemon.process.stop() }
            try await daemon.process.waitForLog(containing: "PipeWire not reachable")
            try daemon.register(placement: "off-head")
            let directory = sandbox.root.appendingPathComponent("recording").path
            let recorder = try sandbox.spawn("earshot-record", [daemon.binary, "record", "--output", directory, "--socket", daemon.socketPath])
            defer { recorder.stop() }
            try await daemon.process.waitForLog(containing: "a recording was asked for before PipeWire's first graph")
            // Now PipeWire is there for the daemon, with every sink, WirePlumber and mpv.
            try FileManager.default.createSymbolicLink(atPath: remote, withDestinationPath: sandbox.socketPath)
            try await recorder.waitForLog(containing: "recording to")
            let held = try #require(try JSONValue.parse(try daemon.earshot("status", "--json").output)["decision"]?["default"])
            let events = try EventSubscription(socket: daemon.socketPath)
            try daemon.place("on-head")
            _ = try await events.next("route-change") { $0["current"] == .string(D.headphones) }
            try daemon.place("off-head")
            _ = try await events.next("route-change") { $0["current"] == .string(D.speakers) }

            recorder.signal(SIGINT)
            _ = recorder.waitForExit(timeout: .seconds(10))
            let graph = "\(directory)/graph.json", script = "\(directory)/events.jsonl"
            let recorded = (try? String(contentsOfFile: script, encoding: .utf8)) ?? ""
            let start = try PwDumpDecoder.decode(contentsOf: URL(fileURLWithPath: graph))
            #expect(start.node(named: D.speakers) != nil && start.node(named: D.headphones) != nil, "the first graph, not the empty one before it")
            let replay = try daemon.earshot("eval", "--graph", graph, "--events", script, "--config", config, "--format", "json")
            #expect(replay.status == 0, "\(replay.output)")
            let decisions = replay.output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            // Checkpoint 0: the default the daemon held when the recording began.
            #expect(decisions.first?["default"] == held, "\(recorded)")
            let replayed = decisions.filter { $0["changed"] == .bool(true) }.compactMap { decision -> String? in if case .string(let name)? = decision["default"] { name } else { nil } }
            #expect(replayed == [D.headphones, D.speakers], "\(recorded)")
        }
    }

    @Test("the microphone recorded and replayed: sources as they appear, a microphone picked by hand, the input's changes replayed in order", arguments: [true, false])
    func microphoneRecordAndReplay(wirePlumber: Bool) async throws {
        let options = PipeWireSandbox.Options(
            wirePlumber: wirePlumber, sinks: [.speakers(), .headphones()], sources: [.internalMicrophone()])
        try await withSandbox(options) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 0\n")
            let config = sandbox.configDir.appendingPathComponent("earshot/earshot.toml").path
            let daemon = try D.start(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "off-head")
            // Recorded at once, as the daemon may not have its first graph yet nor the default
            // source named (run 57 replayed from none: the recording now begins with the first
            // graph, and names the default source the daemon decided; issue 38).
            let events = try EventSubscription(socket: daemon.socketPath)
            let directory = sandbox.root.appendingPathComponent("recording").path
            let recorder = try sandbox.spawn("earshot-record", [daemon.binary, "record", "--output", directory, "--socket", daemon.socketPath])
            defer { recorder.stop() }
            try await recorder.waitForLog(containing: "recording to")

            var inputs: [String] = []
            func input(to source: String) async throws {
                _ = try await events.next("route-change") { $0["direction"] == .string("input") && $0["current"] == .string(source) }
                inputs.append(source)
            }
            // The headset's microphone arrives (as a Bluetooth profile switch makes one; off the
            // head it is out), then the headphones go on: it takes the input with the output.
            let microphone = VirtualSource.headsetMicrophone()
            _ = try await sandbox.createSource(microphone)
            try daemon.place("on-head")
            try await input(to: microphone.name)
            // The laptop's microphone picked by hand.
            let laptop = VirtualSource.internalMicrophone().name
            let pick = try sandbox.run(["pw-metadata", "-n", "default", "0", "default.configured.audio.source", #"{"name":"\#(laptop)"}"#, "Spa:String:JSON"])
            #expect(pick.status == 0)
            try await input(to: laptop)
            try daemon.place("off-head")
            _ = try await events.next("route-change") { $0["current"] == .string(D.speakers) }
            try daemon.place("on-head")
            try await input(to: microphone.name)
            let finalStatus = try JSONValue.parse(try daemon.earshot("status", "--json").output)

            recorder.signal(SIGINT)
            _ = recorder.waitForExit(timeout: .seconds(10))
            let script = "\(directory)/events.jsonl"
            let recorded = (try? String(contentsOfFile: script, encoding: .utf8)) ?? ""
            #expect(recorded.contains(#""select-source":{"node":"\#(laptop)"}"#), "\(recorded)")
            #expect(recorded.contains(#""media.class":"Audio\/Source\/Virtual""#) || recorded.contains(#""media.class":"Audio/Source/Virtual""#), "\(recorded)")
            let replay = try daemon.earshot("eval", "--graph", "\(directory)/graph.json", "--events", script, "--config", config, "--format", "json")
            #expect(replay.status == 0, "\(replay.output)")
            let decisions = replay.output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            let replayed = decisions.filter { $0["input"]?["changed"] == .bool(true) }.compactMap { decision -> String? in
                if case .string(let name)? = decision["default-source"] { name } else { nil }
            }
            #expect(replayed == inputs, "replay \(replayed), daemon \(inputs)\n\(recorded)")
            #expect(decisions.last?["default-source"] == finalStatus["decision"]?["default-source"])
        }
    }

    @Test("[record] keep-hours: the daemon keeps its own recording, and earshot record --since saves it for a replay after the fact")
    func rollingRecording() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[record]\nkeep-hours = 1\n[timing]\noff-grace-ms = 0\n")
            let config = sandbox.configDir.appendingPathComponent("earshot/earshot.toml").path
            let daemon = try D.start(in: sandbox)
            try daemon.register(placement: "off-head")
            // The segment begins with the daemon's first graph, on a task of its own: the
            // placements come once it has (begun after them, its graph would name the
            // headphones the daemon had chosen, and the replay rightly start there).
            try await daemon.process.waitForLog(containing: "rolling recording: segment")
            let events = try EventSubscription(socket: daemon.socketPath)
            try daemon.place("on-head")
            _ = try await events.next("route-change") { $0["current"] == .string(D.headphones) }
            try daemon.place("off-head")
            _ = try await events.next("route-change") { $0["current"] == .string(D.speakers) }
            // A clean stop closes the segment: everything before it is on disk.
            daemon.process.stop()
            let recordings = sandbox.stateDir.appendingPathComponent("earshot/recordings").path
            let output = sandbox.root.appendingPathComponent("since").path
            let saved = try daemon.earshot("record", "--since", "1h", "--recordings", recordings, "--output", output)
            #expect(saved.status == 0, "\(saved.output)")
            let mode = try FileManager.default.attributesOfItem(atPath: "\(output)/events.jsonl")[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let replay = try daemon.earshot("eval", "--graph", "\(output)/graph.json", "--events", "\(output)/events.jsonl", "--config", config, "--format", "json")
            #expect(replay.status == 0, "\(replay.output)")
            let changes = replay.output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
                .filter { $0["changed"] == .bool(true) }.compactMap { decision -> String? in if case .string(let name)? = decision["default"] { name } else { nil } }
            // The segment began with the daemon's first graph: the replay ends with the
            // placements' two changes, as the daemon made them.
            #expect(Array(changes.suffix(2)) == [D.headphones, D.speakers], "\(replay.output)")
            // The same directory again: refused, the recording there untouched (appending would
            // make a script eval cannot replay).
            let before = try String(contentsOfFile: "\(output)/events.jsonl", encoding: .utf8)
            let again = try daemon.earshot("record", "--since", "1h", "--recordings", recordings, "--output", output)
            #expect(again.status == 1)
            #expect(try String(contentsOfFile: "\(output)/events.jsonl", encoding: .utf8) == before)
            // Nothing kept: a clear error, exit 1.
            let none = try daemon.earshot("record", "--since", "1h", "--recordings", sandbox.root.appendingPathComponent("nothing").path, "--output", output + "2")
            #expect(none.status == 1, "\(none.output)")
        }
    }
}
