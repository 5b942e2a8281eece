import WireFields
import ControlProtocol
@testable import EarshotDaemon
import Foundation
import Logging
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// Issue 21 made reads (properties, Status, List, Current) a queue of their own, so they never
/// wait behind changes. Issue 28: the flood test checked it with a wall-clock bound that a
/// loaded run missed; the order is what is promised, so the order is what is checked, with a
/// change held in the daemon for as long as the test likes.
@Suite("D-Bus reads and changes", .blockingCalls, .timeLimit(.minutes(2)))
struct DBusReadOrderTests {
    @Test("a property read and a Status call are answered while an Update sent before them is still being applied")
    func readsOvertakeAChange() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-dbus-order-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        for name in ["XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"] { environment[name] = directory.path }
        let bus = try PrivateBus(
            name: "dbus-daemon", socket: directory.appendingPathComponent("bus").path, environment: environment,
            logFile: directory.appendingPathComponent("dbus.log"))
        defer { bus.stop() }
        let control = InMemoryDaemonControl()
        await control.holdChanges()
        let connection = try DBusConnection(.address(bus.address))
        defer { connection.close() }
        let service = try await EarshotBusService.start(on: connection, control: control, logger: Logger(label: "earshot.test"))
        defer { service.stop() }
        let busctl = ["busctl", "--address=\(bus.address)"]
        let object = ["org.earshot.Earshot1", "/org/earshot/Earshot1", "org.earshot.Earshot1"]
        let update = try ChildProcess(
            name: "busctl-update",
            arguments: busctl + ["call"] + object + ["Update", "ssa{sv}", "AA:BB:CC:DD:EE:FF", "org.example.order", "1", "placement", "s", "on-head"],
            environment: environment, logFile: directory.appendingPathComponent("update.log"))
        defer { update.stop(grace: .zero) }
        await control.waitForHeldChange()

        let mode = try Shell.run(busctl + ["get-property"] + object + ["Mode"], environment: environment)
        #expect(mode.status == 0, "\(mode.standardError)")
        #expect(mode.standardOutput == "s \"standalone\"\n")
        let status = try Shell.run(busctl + ["call"] + object + ["Status"], environment: environment)
        #expect(status.status == 0, "\(status.standardError)")
        #expect(!update.hasExited, "the Update was answered before the reads: it was not held")

        await control.releaseChanges()
        // Released, the Update is answered (refused: nothing registered that address).
        #expect(update.waitForExit(timeout: .seconds(60)) != nil)
        #expect(await control.performed.count == 1)
    }
}
