import AudioGraph
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// `earshot graph` as a user runs it, against a PipeWire it never saw before.
@Suite("earshot graph", .timeLimit(.minutes(2)), .blockingCalls)
struct GraphCLITests {
    @Test("--json lists sinks with names, Bluetooth addresses, form factors, streams and defaults")
    func graphJSON() async throws {
        let binary = try #require(EarshotBinary.url?.path)
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let (_, stream) = try await sandbox.startPlayer()
            _ = try await sandbox.observer.waitUntil("mpv linked") { $0.outgoingLinks(of: stream.id).count == 2 }
            let result = try sandbox.run([binary, "graph", "--json"])
            #expect(result.status == 0)
            let object = try JSONValue.parse(result.output)
            guard case .array(let sinks)? = object["sinks"] else { throw FixtureError("no sinks in \(result.output)") }
            let headphones = try #require(sinks.first { $0["name"] == .string("bluez_output.AA_BB_CC_DD_EE_FF.1") })
            #expect(headphones["bluetooth_address"] == .string("AA:BB:CC:DD:EE:FF"))
            #expect(headphones["form_factor"] == .string("headphone"))
            #expect(headphones["bus"] == .string("bluetooth"))
            let speakers = try #require(sinks.first { $0["name"] == .string("alsa_output.sandbox.analog-stereo") })
            #expect(speakers["form_factor"] == .string("internal"))
            guard case .array(let streams)? = object["streams"], let mpv = streams.first else { throw FixtureError("no streams") }
            guard case .array(let targets)? = mpv["linked_to"] else { throw FixtureError("no linked_to") }
            #expect(targets.count == 1)
            #expect(object["defaults"]?["effective_sink"] == targets.first)

            let text = try sandbox.run([binary, "graph"])
            #expect(text.status == 0)
            #expect(text.output.contains("Sandbox Headphones"))
        }
    }

    @Test("no reachable PipeWire exits 3 with a message")
    func unreachable() async throws {
        let result = try EarshotBinary.run(["graph"], environment: [
            "XDG_RUNTIME_DIR": "/nonexistent-earshot", "PIPEWIRE_REMOTE": "/nonexistent-earshot/pipewire-0",
        ])
        #expect(result.status == 3)
        #expect(result.standardError.contains("cannot connect to PipeWire: no socket at /nonexistent-earshot/pipewire-0"), "\(result.standardError)")
        #expect(!result.standardError.contains("Host is down"))
    }

    @Test("the daemon refuses to start without XDG_RUNTIME_DIR, creating nothing")
    func daemonWithoutRuntimeDirectory() throws {
        let result = try EarshotBinary.run(["daemon"], environment: ["HOME": "/nonexistent-earshot-home"], removing: ["XDG_RUNTIME_DIR"])
        #expect(result.status == 64 || result.status == 2, "exit \(result.status)")
        #expect(result.standardError.contains("XDG_RUNTIME_DIR is not set"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: "/run/user/\(getuid())"))
    }
}
