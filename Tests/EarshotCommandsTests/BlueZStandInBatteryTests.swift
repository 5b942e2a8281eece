import Foundation
import PipeWireTestSupport
import Synchronization
import SystemBridge
import TestScheduling
import Testing

/// The stand-in's battery API (scripts/testing/standin_battery.py) against BlueZ's semantics,
/// driven by test providers made with Earshot's own D-Bus binding: register and unregister and
/// their errors, the first provider of a device wins, an invalid Device is ignored, a level over
/// 100 is ignored, a provider leaving the bus takes its batteries, and the switch that starts
/// it without the manager.
@Suite("BlueZ stand-in: batteries", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct BlueZStandInBatteryTests {
    static let airPods = "AA:BB:CC:DD:EE:01"
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    static let manager = "org.bluez.BatteryProviderManager1"

    /// A battery provider on its own connection: an ObjectManager at `root` with children.
    final class TestProvider: Sendable {
        let bus: DBusConnection
        let root: String
        private let children = Mutex<[String: [String: DBusValue]]>([:])

        init(address: String, root: String) async throws {
            bus = try DBusConnection(.address(address))
            self.root = root
            try await bus.exportSubtree(path: root) { [weak self] call in
                guard let self, call.member == "GetManagedObjects" else {
                    return call.reply.fail(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no")
                }
                let objects = self.children.withLock { $0 }.sorted { $0.key < $1.key }.map { path, properties in
                    DBusValue.dictEntry(.objectPath(path), .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.BatteryProvider1"), .properties(properties))]))
                }
                call.reply([.array(element: "{oa{sa{sv}}}", objects)])
            }
        }

        func register(adapter: String = "/org/bluez/hci0", member: String = "RegisterBatteryProvider", path: String? = nil) async throws {
            _ = try await bus.call(
                destination: "org.bluez", path: adapter, interface: BlueZStandInBatteryTests.manager, member: member, [.objectPath(path ?? root)],
                timeout: .seconds(5))
        }

        func add(_ name: String, device: String, percentage: UInt8, source: String) {
            let path = root + "/" + name
            let properties: [String: DBusValue] = ["Device": .objectPath(device), "Percentage": .byte(percentage), "Source": .string(source)]
            children.withLock { $0[path] = properties }
            bus.emitSignal(path: root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", [
                .objectPath(path), .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.BatteryProvider1"), .properties(properties))]),
            ])
        }

        func percentage(_ name: String, _ value: DBusValue) {
            bus.emitSignal(path: root + "/" + name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", [
                .string("org.bluez.BatteryProvider1"), .properties(["Percentage": value]), .strings([]),
            ])
        }
    }

    static func errorName(_ body: () async throws -> Void) async -> String? {
        do { try await body() } catch let DBusError.remote(name, _) { return name } catch { return "\(error)" }
        return nil
    }

    static func battery(_ bus: DBusConnection) async throws -> [String: DBusValue]? {
        try await bus.call(
            destination: "org.bluez", path: device, interface: "org.freedesktop.DBus.Properties", member: "GetAll", [.string("org.bluez.Battery1")]
        ).first?.dictionary
    }

    @Test("Register/Unregister and their errors; first provider wins; invalid Device and levels over 100 ignored; a provider leaving takes its battery")
    func semantics() async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            let address = try #require(sandbox.environment["DBUS_SYSTEM_BUS_ADDRESS"])
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"])
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            try await bluez.addAirPods(Self.airPods)
            let first = try await TestProvider(address: address, root: "/org/example/first")
            defer { first.bus.close() }
            let second = try await TestProvider(address: address, root: "/org/example/second")
            defer { second.bus.close() }
            let reader = try DBusConnection(.address(address))
            defer { reader.close() }

            var mark = bluez.logMark()
            try await first.register()
            #expect(await Self.errorName { try await first.register() } == "org.bluez.Error.AlreadyExists")
            #expect(await Self.errorName { try await second.register(path: first.root) } == "org.bluez.Error.AlreadyExists")
            #expect(await Self.errorName { try await second.register(member: "UnregisterBatteryProvider", path: first.root) } == "org.bluez.Error.DoesNotExist")
            try await second.register()
            first.add("ghost", device: "/org/bluez/hci0/dev_00_00_00_00_00_00", percentage: 10, source: "first")
            _ = try await bluez.waitForLine(containing: "battery for /org/bluez/hci0/dev_00_00_00_00_00_00 ignored: no such device", since: mark)
            first.add("pods", device: Self.device, percentage: 50, source: "first")
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 50", since: mark)
            second.add("pods", device: Self.device, percentage: 99, source: "second")
            _ = try await bluez.waitForLine(containing: "battery for \(Self.device) ignored: already provided", since: mark)
            #expect(try await Self.battery(reader) == ["Percentage": .byte(50), "Source": .string("first")])

            mark = bluez.logMark()
            first.percentage("pods", .byte(120))
            first.percentage("pods", .uint32(20))
            first.percentage("pods", .byte(30))
            try await bluez.waitForLines(
                inOrder: ["ignored percentage 120", "ignored percentage 20", "battery \(Self.device) percentage 30"], since: mark)
            #expect(try await Self.battery(reader)?["Percentage"] == .byte(30))

            // The first provider leaves the bus: its battery goes (the second's stays ignored).
            first.bus.close()
            _ = try await bluez.waitForLine(containing: "battery provider /org/example/first dropped: its owner left the bus", since: mark)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) removed", since: mark)
            #expect(try await Self.battery(reader) == [:])
            try await second.register(member: "UnregisterBatteryProvider")
            _ = try await bluez.waitForLine(containing: "battery provider /org/example/second unregistered", since: mark)
        }
    }

    @Test("--no-battery-manager: the adapters list no manager, Register is an unknown method; `battery manager add` brings it (InterfacesAdded)")
    func withoutManager() async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            let address = try #require(sandbox.environment["DBUS_SYSTEM_BUS_ADDRESS"])
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], options: ["--no-battery-manager"])
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let provider = try await TestProvider(address: address, root: "/org/example/p")
            defer { provider.bus.close() }
            let objects = try await provider.bus.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
            #expect(objects.first?.dictionary?["/org/bluez/hci0"]?.dictionary?[Self.manager] == nil)
            #expect(await Self.errorName { try await provider.register() } == "org.freedesktop.DBus.Error.UnknownMethod")
            let (signals, arrived) = AsyncStream.makeStream(of: DBusSignal.self)
            try await provider.bus.addMatch("type='signal',sender='org.bluez',member='InterfacesAdded'") { arrived.yield($0) }
            try await bluez.run("battery manager add hci0")
            let added = try await signals.collect(timeout: .seconds(10)) { $0.arguments.first?.string == "/org/bluez/hci0" }
            #expect(added.last?.arguments.last?.dictionary?[Self.manager] != nil)
            try await provider.register()
        }
    }
}
