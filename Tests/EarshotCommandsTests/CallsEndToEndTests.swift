import AudioGraph
@testable import EarshotCommands
import Foundation
import SystemBridge
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 32: a worn Bluetooth headset keeps its music quality; its microphone is for calls
/// (docs/policy.md §8 `bluetooth-microphone = "calls"`), on real PipeWire with real capture
/// streams (`pw-record`), on both stacks, with WirePlumber and standalone. The headset's input
/// is WirePlumber 0.5's kind (`bluez_input.<address>`, `bluez5.loopback`): the one that switches
/// the headset to the hands-free profile when anything records from it.
@Suite("Calls end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct CallsEndToEndTests {
    typealias D = DaemonFixture
    static let headsetInput = "bluez_input.AA:BB:CC:DD:EE:FF"
    static let laptopMicrophone = "alsa_input.sandbox.analog-stereo"
    static let headsetInputSource = VirtualSource(
        name: headsetInput, description: "Sandbox Headset Input", formFactor: "headset", bus: "bluetooth", bluetoothAddress: "AA:BB:CC:DD:EE:FF",
        channels: ["MONO"], extraProperties: ["bluez5.loopback": "true", "priority.session": "2010"])

    static func options(_ wirePlumber: Bool) -> PipeWireSandbox.Options {
        PipeWireSandbox.Options(wirePlumber: wirePlumber, sinks: [.speakers(), .headphones()], sources: [.internalMicrophone(), headsetInputSource])
    }

    /// Waits until each stream records from `source` (by name) and only from it.
    @discardableResult
    static func waitUntil(_ sandbox: PipeWireSandbox, _ streams: [ObjectID], recordFrom source: String, timeout: Duration = .seconds(20)) async throws -> Graph {
        try await sandbox.observer.waitUntil("\(streams) recording from \(source)", timeout: timeout) { graph in
            guard let node = graph.node(named: source) else { return false }
            return streams.allSatisfy { graph.linkedSources(of: $0).map(\.id) == [node.id] }
        }
    }

    /// The stream's `target.object` as a fresh reading of the `default` metadata says it: the
    /// observer's binding may miss a change made while another client's bind is pending
    /// (docs/reliability.md, "A change PipeWire does not pass on"); the links that follow it are
    /// what the waits watch.
    static func target(of stream: ObjectID, in sandbox: PipeWireSandbox) throws -> String? {
        let listed = try sandbox.run(["pw-metadata", "-n", "default", String(stream), "target.object"]).output
        guard let range = listed.range(of: "key:'target.object' value:'") else { return nil }
        return String(listed[range.upperBound...].prefix { $0 != "'" })
    }

    @Test("worn: the output goes to the headset, the default source stays the laptop's; pw-record stays there, a Communication stream and a browser's call go to the headset's input and back when it comes off; nothing is left in the metadata", arguments: [true, false])
    func callsOnly(wirePlumber: Bool) async throws {
        try await withSandbox(Self.options(wirePlumber)) { sandbox in
            let daemon = try D.start(in: sandbox)
            try daemon.register(placement: "off-head")
            try await daemon.process.waitForLog(containing: "connected to PipeWire")
            let (_, recorder) = try await sandbox.startRecorder()
            let (call, callStream) = try await sandbox.startRecorder(name: "softphone", mediaRole: "Communication")
            let (_, browser) = try await sandbox.startRecorder(name: "browser", properties: ["application.name": "Chromium input"])
            #expect(callStream.props["media.role"] == "Communication", "\(callStream.props)")
            #expect(browser.props["application.name"] == "Chromium input", "\(browser.props)")
            let streams = [recorder.id, callStream.id, browser.id]
            try await Self.waitUntil(sandbox, streams, recordFrom: Self.laptopMicrophone)

            let events = try EventSubscription(socket: daemon.socketPath)
            try daemon.place("on-head")
            let output = try await events.next("route-change")
            #expect(output["direction"] == .string("output") && output["current"] == .string(D.headphones))
            // Where calls go, then each call moved, in the same decision.
            let source = try await events.next("call-source")
            #expect(source["current"] == .string(Self.headsetInput) && source["at"] == output["at"])
            var moved: [JSONValue] = []
            for _ in 0..<2 { moved.append(try await events.next("stream-moved")) }
            #expect(Set(moved.compactMap { $0["stream"] }) == [.integer(Int64(callStream.id)), .integer(Int64(browser.id))], "\(moved)")
            #expect(moved.allSatisfy { $0["kind"] == .string("call") && $0["to"] == .string(Self.headsetInput) && $0["from"] == .null })
            // The calls go to the headset's input; the recorder stays on the laptop's.
            try await Self.waitUntil(sandbox, [callStream.id, browser.id], recordFrom: Self.headsetInput)
            let graph = try await Self.waitUntil(sandbox, [recorder.id], recordFrom: Self.laptopMicrophone)
            #expect(graph.effectiveDefaultSourceName == Self.laptopMicrophone)
            if wirePlumber {
                // Each call, and only it, has its target in the metadata (WirePlumber linked
                // them there from it).
                #expect(try Self.target(of: callStream.id, in: sandbox) == Self.headsetInput)
                #expect(try Self.target(of: browser.id, in: sandbox) == Self.headsetInput)
                #expect(try Self.target(of: recorder.id, in: sandbox) == nil)
            }
            let status = try JSONValue.parse(try daemon.earshot("status", "--json").output)
            #expect(status["decision"]?["default-source"] == .string(Self.laptopMicrophone))
            let explained = try daemon.earshot("status", "--explain").output
            #expect(explained.contains("keeps A2DP: calls only"), "\(explained)")
            #expect(status["calls"]?["source"] == .string(Self.headsetInput), "\(status)")
            #expect(status["calls"]?["streams"].map { "\($0)" }?.contains("Chromium input") == true, "\(status)")

            // Off: the calls come back to the default source, and no target is left behind.
            try daemon.place("off-head")
            _ = try await events.next("route-change", where: { $0["direction"] == .string("output") && $0["current"] == .string(D.speakers) })
            try await Self.waitUntil(sandbox, streams, recordFrom: Self.laptopMicrophone)
            if wirePlumber {
                #expect(try Self.target(of: callStream.id, in: sandbox) == nil)
                #expect(try Self.target(of: browser.id, in: sandbox) == nil)
            }

            // On again, then the call ends while pointed: no entry for it is left.
            try daemon.place("on-head")
            try await Self.waitUntil(sandbox, [callStream.id], recordFrom: Self.headsetInput)
            call.stop()
            // PipeWire drops the keys of a node that goes (0.3.65 tells no client): nothing is
            // left, and the next stream given the id records from the default source.
            _ = try await sandbox.observer.waitUntil("the call's stream gone") { $0.nodes[callStream.id] == nil }
            let listed = try sandbox.run(["pw-metadata", "-n", "default", String(callStream.id)])
            #expect(!listed.output.contains("target.object"), "\(listed.output)")
            let (_, later) = try await sandbox.startRecorder(name: "later")
            try await Self.waitUntil(sandbox, [later.id], recordFrom: Self.laptopMicrophone)
            let log = daemon.process.logTail(lines: 400)
            #expect(log.contains("pointed at \(Self.headsetInput)") == wirePlumber, "\(log)")
        }
    }

    @Test("a restart during a call: the new daemon finds its predecessor's target and keeps it (nothing written); the headset off, it is removed; the config changed to a call list without the app, it is removed too")
    func restartDuringACall() async throws {
        try await withSandbox(Self.options(true)) { sandbox in
            var daemon = try D.start(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "on-head")
            let (_, call) = try await sandbox.startRecorder(name: "softphone", mediaRole: "Communication")
            let (_, browser) = try await sandbox.startRecorder(name: "browser", properties: ["application.name": "Firefox"])
            try await Self.waitUntil(sandbox, [call.id, browser.id], recordFrom: Self.headsetInput)
            #expect(try Self.target(of: call.id, in: sandbox) == Self.headsetInput)
            #expect(try Self.target(of: browser.id, in: sandbox) == Self.headsetInput)

            // Firefox is no call application any more after the restart.
            let config = sandbox.root.appendingPathComponent("calls.toml").path
            try "[input]\ncall-applications = [\"Jitsi Meet\"]\n".write(toFile: config, atomically: true, encoding: .utf8)
            try daemon.restart(arguments: ["--config", config])
            try await daemon.process.waitForLog(containing: "connected to PipeWire")
            // The restored registration is worn: the call's target is adopted, Firefox's removed.
            try await Self.waitUntil(sandbox, [browser.id], recordFrom: Self.laptopMicrophone)
            #expect(try Self.target(of: browser.id, in: sandbox) == nil)
            try await Self.waitUntil(sandbox, [call.id], recordFrom: Self.headsetInput)
            #expect(try Self.target(of: call.id, in: sandbox) == Self.headsetInput)
            let status = try JSONValue.parse(try daemon.earshot("status", "--json").output)
            #expect(status["decision"]?["default-source"] == .string(Self.laptopMicrophone))
            let log = daemon.process.logTail(lines: 400)
            // The log holds both daemons' lines: the call was pointed once, by the first.
            #expect(log.components(separatedBy: "capture stream \(call.id) pointed at").count == 2, "adopted, not written again: \(log)")
            #expect(log.contains("target.object of capture stream \(browser.id) removed"), "\(log)")

            try daemon.place("off-head")
            try await Self.waitUntil(sandbox, [call.id, browser.id], recordFrom: Self.laptopMicrophone)
            #expect(try Self.target(of: call.id, in: sandbox) == nil)
        }
    }

    @Test("WirePlumber leaves during a call and comes back: standalone links the call from the headset and the recorder from the laptop; back cooperative, each records from one source only, the call still from the headset")
    func sessionManagerHandOverDuringACall() async throws {
        try await withSandbox(Self.options(true)) { sandbox in
            let daemon = try D.start(in: sandbox)
            try daemon.register(placement: "on-head")
            let (_, recorder) = try await sandbox.startRecorder()
            let (_, call) = try await sandbox.startRecorder(name: "softphone", mediaRole: "Communication")
            do {
                try await Self.waitUntil(sandbox, [call.id], recordFrom: Self.headsetInput)
            } catch {
                let graph = sandbox.observer.snapshot()
                Issue.record("\(error): \(graph.linkedSources(of: call.id).map(\.name)) \(daemon.process.logTail(lines: 300).split(separator: "\n").filter { $0.contains("call") || $0.contains("input =") || $0.contains("mode") })")
                throw error
            }
            try await Self.waitUntil(sandbox, [recorder.id], recordFrom: Self.laptopMicrophone)

            try sandbox.killWirePlumber()
            try await daemon.process.waitForLog(containing: "apply mode: standalone", timeout: .seconds(30))
            try await Self.waitUntil(sandbox, [call.id], recordFrom: Self.headsetInput, timeout: .seconds(30))
            try await Self.waitUntil(sandbox, [recorder.id], recordFrom: Self.laptopMicrophone, timeout: .seconds(30))

            try sandbox.startWirePlumber()
            try await daemon.process.waitForLog(containing: "apply mode: cooperative", timeout: .seconds(30))
            // Settled: each stream records from one source, the one it should (waitUntil asks
            // for exactly that source's links and no other).
            try await Self.waitUntil(sandbox, [call.id], recordFrom: Self.headsetInput, timeout: .seconds(40))
            try await Self.waitUntil(sandbox, [recorder.id], recordFrom: Self.laptopMicrophone, timeout: .seconds(40))
            // The new session manager's metadata gets the call's target again (a fresh reading
            // each time the graph changes: the observer may miss a metadata change).
            let deadline = ContinuousClock.now + .seconds(30)
            var target = try Self.target(of: call.id, in: sandbox)
            while target != Self.headsetInput, ContinuousClock.now < deadline {
                _ = try? await sandbox.observer.waitUntil("any change", timeout: .milliseconds(300)) { _ in false }
                target = try Self.target(of: call.id, in: sandbox)
            }
            #expect(target == Self.headsetInput, "\((try? sandbox.run(["pw-metadata", "-n", "default"]).output) ?? "") \(daemon.process.logTail(lines: 400).split(separator: "\n").filter { $0.contains("call") || $0.contains("mode") || $0.contains("metadata") }.joined(separator: "\n"))")
        }
    }
}
