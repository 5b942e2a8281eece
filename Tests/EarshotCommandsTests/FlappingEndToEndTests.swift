import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import Testing

/// The third hostile round's flapping device, live with real PipeWire + WirePlumber: a USB
/// headset sink created and destroyed again and again (a flaky hub, a device resetting, a
/// hostile client) took the output on every appearance. Now an arrival counts only once it has
/// settled, and a sink that keeps flapping is said once and held back (docs/policy.md §1).
@Suite("Flapping sinks end to end", .serialized, .timeLimit(.minutes(3)))
struct FlappingEndToEndTests {
    typealias D = DaemonFixture

    static let usb = VirtualSink(name: "alsa_output.usb-Flaky_Hub_Headset-00.analog-stereo", description: "Flaky USB Headset", formFactor: "headset", bus: "usb")

    @Test("a USB headset sink created and destroyed 30 times never takes the output and is said once; when it stays, it takes the output after the hold")
    func flappingSink() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers()])) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\nflap-hold-ms = 1500\n")
            let daemon = try await D.startOffPool(in: sandbox)
            let session = try DaemonSession(path: daemon.socketPath)
            #expect(try await daemon.settle(session) == D.speakers)
            let events = try EventSubscription(socket: daemon.socketPath)
            let start = ContinuousClock.now
            for _ in 0..<30 {
                try await sandbox.addSink(Self.usb)
                try await sandbox.removeSink(named: Self.usb.name)
            }
            let flapped = start.duration(to: .now)
            try await sandbox.addSink(Self.usb)
            let stays = ContinuousClock.now
            // The first route change after all that is the one to the sink that stayed: none
            // came while it flapped (it would have gone to it and back, twice per appearance).
            var first: JSONValue?
            while first == nil {
                let event = try await events.nextAny(timeout: .seconds(20))
                if event["event"] == .string("route-change") { first = event }
            }
            let took = stays.duration(to: .now)
            #expect(first?["current"] == .string(Self.usb.name), "\(String(describing: first))")
            #expect(first?["previous"] == .string(D.speakers))
            #expect(first?["reason"] == .string("new-device-available"))
            #expect(took >= .milliseconds(1500), "held back until it stayed flap-hold-ms: \(took)")
            #expect(try await daemon.settle(session) == Self.usb.name)
            let log = daemon.process.logTail(lines: 100_000)
            let said = log.components(separatedBy: "keeps coming and going").count - 1
            #expect(said == 1, "said once: \(said)\n\(daemon.process.logTail(lines: 30))")
            print("flapping: 30 appearances in \(flapped); the one that stayed took the output after \(took)")
        }
    }

    @Test("a sink that appears and stays takes the output after the settle time, not before")
    func settlingSink() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers()])) { sandbox in
            let daemon = try await D.startOffPool(in: sandbox)
            let session = try DaemonSession(path: daemon.socketPath)
            #expect(try await daemon.settle(session) == D.speakers)
            let events = try EventSubscription(socket: daemon.socketPath)
            try await sandbox.addSink(Self.usb)
            let change = try await events.next("route-change")
            #expect(change["current"] == .string(Self.usb.name) && change["reason"] == .string("new-device-available"))
            #expect(try await daemon.settle(session) == Self.usb.name)
            // The decision that moved it was the settle timer's, not the node's appearance.
            #expect(daemon.process.logTail(lines: 100_000).contains("settled \(Self.usb.name)"), "\(daemon.process.logTail(lines: 30))")
        }
    }
}
