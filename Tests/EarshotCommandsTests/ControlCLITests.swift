import ControlProtocol
import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import TestScheduling
import Testing

/// The control commands as a user runs them: usage mistakes (2), no daemon (3), and against a
/// control server on a stand-in daemon, ok (0) and refused (1).
@Suite("earshot accessory/status/watch", .timeLimit(.minutes(2)), .blockingCalls)
struct ControlCLITests {
    @Test("usage mistakes exit 2 before any daemon is asked", arguments: [
        ["accessory", "register"],
        ["accessory", "register", "AA:BB:CC:DD:EE:FF"],
        ["accessory", "register", "AA:BB:CC", "--capabilities", "placement"],
        ["accessory", "register", "AA:BB:CC:DD:EE:FF", "--capabilities", "teleport"],
        ["accessory", "register", "AA:BB:CC:DD:EE:FF", "--capabilities", "placement", "--placement", "in-pocket"],
        ["accessory", "update", "AA:BB:CC:DD:EE:FF"],
        ["accessory", "update", "AA:BB:CC:DD:EE:FF", "--primary-source", "nobody"],
        ["accessory", "unregister"],
        ["status", "--bogus"],
        ["watch", "extra"],
    ])
    func usage(_ arguments: [String]) async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let result = try await runOffPool(arguments, runtime: runtime)
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("Usage:") || result.standardError.contains("Error:"))
    }

    @Test("no daemon listening exits 3 with where it looked", arguments: [
        ["status"], ["watch"], ["accessory", "show"], ["accessory", "update", "AA:BB:CC:DD:EE:FF", "--placement", "on-head"],
    ])
    func noDaemon(_ arguments: [String]) async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let result = try await runOffPool(arguments, runtime: runtime)
        #expect(result.status == 3, "\(result.standardError)")
        #expect(result.standardError.contains("not reachable at \(runtime.path)/earshot/control"))
    }

    @Test("--socket naming something that is not the daemon exits 3")
    func socketOverride() async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let file = runtime.appendingPathComponent("not-a-socket").path
        try "".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await runOffPool(["status", "--socket", file], runtime: runtime)
        #expect(result.status == 3)
        #expect(result.standardError.contains(file))
    }

    @Test("register, show, update, unregister against a daemon: 0, and a refusal prints its code and exits 1")
    func againstServer() async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let server = try await ControlServer.start(path: "\(runtime.path)/earshot/control", control: InMemoryDaemonControl(status: ControlWire.Status(mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "wireplumber", decision: nil)))
        do {
            try await exchanges(runtime: runtime)
            await server.close()
        } catch {
            await server.close()
            throw error
        }
    }

    @Test("status exits 3 when the daemon answers but is not connected to PipeWire, and still prints the status")
    func statusWithoutPipeWire() async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let server = try await ControlServer.start(
            path: "\(runtime.path)/earshot/control",
            control: InMemoryDaemonControl(status: ControlWire.Status(mode: .disconnected, remote: "pipewire-0", connected: false, sessionManager: nil, decision: nil)))
        let result = try await runOffPool(["status"], runtime: runtime)
        await server.close()
        #expect(result.status == 3)
        #expect(result.standardOutput.contains("pipewire: pipewire-0, not connected"))
        #expect(result.standardError.contains("the daemon runs but PipeWire (pipewire-0) is not reachable"))
    }

    private func exchanges(runtime: URL) async throws {
        let registered = try await runOffPool(
            ["accessory", "register", "aa:bb:cc:dd:ee:ff", "--capabilities", "audio-switching,placement", "--placement", "off-head"], runtime: runtime)
        #expect(registered.status == 0, "\(registered.standardError)")
        #expect(registered.standardOutput.contains("registered AA:BB:CC:DD:EE:FF"))
        #expect(registered.standardOutput.contains("placement: off-head"))

        let shown = try await runOffPool(["accessory", "show", "--json"], runtime: runtime)
        #expect(shown.status == 0)
        let list = try JSONValue.parse(shown.standardOutput)
        guard case .array(let items) = list else { throw CLIFailure("not a list: \(shown.standardOutput)") }
        #expect(items.first?["reporter"] == .string("org.earshot.cli"))

        let updated = try await runOffPool(["accessory", "update", "AA:BB:CC:DD:EE:FF", "--placement", "on-head"], runtime: runtime)
        #expect(updated.status == 0)
        #expect(updated.standardOutput.contains("placement: on-head"))

        let refused = try await runOffPool(["accessory", "update", "11:22:33:44:55:66", "--placement", "on-head"], runtime: runtime)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("refused: unknown:"))

        let status = try await runOffPool(["status"], runtime: runtime)
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("mode: cooperative (session manager: wireplumber)"))

        let unregistered = try await runOffPool(["accessory", "unregister", "AA:BB:CC:DD:EE:FF"], runtime: runtime)
        #expect(unregistered.status == 0)
        let gone = try await runOffPool(["accessory", "show", "AA:BB:CC:DD:EE:FF"], runtime: runtime)
        #expect(gone.status == 1)
    }

    @Test("watch prints a line per route change, and exits 3 when the daemon goes away")
    func watch() async throws {
        let runtime = try isolatedRuntime()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let control = InMemoryDaemonControl()
        let server = try await ControlServer.start(path: "\(runtime.path)/earshot/control", control: control)
        let watching = Task { try await runOffPool(["watch"], runtime: runtime) }
        // The event goes out once watch has subscribed: wait for that, with a deadline.
        try await control.waitForSubscriber(timeout: .seconds(20))
        await control.emit(.routeChange(ControlWire.RouteChangeEvent(
            at: 0, reason: .placementChanged, previous: "speakers", current: "headphones", accessory: "AA:BB:CC:DD:EE:FF", summary: "2/2 sinks eligible")))
        await control.finishSubscriptions()
        let result = try await watching.value
        await server.close()
        #expect(result.status == 3)
        #expect(result.standardOutput == "1970-01-01T00:00:00.000Z  placement-changed  speakers -> headphones  accessory AA:BB:CC:DD:EE:FF\n")
    }

    private func isolatedRuntime() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-cli-runtime-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return root
    }

    /// Runs the binary on a thread of its own: waiting for it on the cooperative pool would
    /// starve the in-process server that answers it.
    private func runOffPool(_ arguments: [String], runtime: URL) async throws -> EarshotBinary.Result {
        let environment = [
            "XDG_RUNTIME_DIR": runtime.path, "XDG_STATE_HOME": runtime.appendingPathComponent("state").path,
            "XDG_CONFIG_HOME": runtime.appendingPathComponent("config").path,
        ]
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try EarshotBinary.run(arguments, environment: environment) }) }.start()
        }
    }
}

struct CLIFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
