@testable import EarshotDaemon
import SystemBridge
import Testing

/// Which adapters have BlueZ's battery provider manager and whose battery each device shows,
/// from bodies as bluetoothd sends them.
@Suite("Battery provider: BlueZ's side")
struct BlueZBatteryViewTests {
    typealias B = BlueZBodies
    static let device = B.devicePath("AA:BB:CC:DD:EE:01")

    static func adapter(manager: Bool) -> DBusValue {
        var entries: [String: [String: DBusValue]] = ["org.bluez.Adapter1": ["Address": .string("11:22:33:44:55:66")]]
        if manager { entries["org.bluez.BatteryProviderManager1"] = [:] }
        return B.interfaces(entries)
    }

    static func battery(source: String?) -> DBusValue {
        var properties: [String: DBusValue] = ["Percentage": .byte(50)]
        if let source { properties["Source"] = .string(source) }
        return B.interfaces(["org.bluez.Battery1": properties])
    }

    @Test("Read: managers per adapter; a battery of Earshot's own is not another's, one without Source is")
    func read() {
        var view = BlueZBatteryView()
        view.read(managedObjects: B.managedObjects([
            (B.hci0, Self.adapter(manager: true)), (B.hci1, Self.adapter(manager: false)),
            (Self.device, Self.battery(source: "Earshot")), (B.devicePath("AA:BB:CC:DD:EE:02"), Self.battery(source: nil)),
        ]))
        #expect(view.managers == [B.hci0])
        #expect(view.devicesWithOtherBattery == [B.devicePath("AA:BB:CC:DD:EE:02")])
    }

    @Test("Signals: the manager appearing, another provider's battery coming and going, BlueZ's owner changing")
    func signals() {
        var view = BlueZBatteryView()
        #expect(view.handle(B.added(B.hci1, Self.adapter(manager: true))) == .managerAppeared(adapterPath: B.hci1))
        #expect(view.handle(B.added(B.hci1, Self.adapter(manager: true))) == .nothing)
        #expect(view.handle(B.added(Self.device, Self.battery(source: "HFP 1.7"))) == .changed)
        #expect(view.devicesWithOtherBattery == [Self.device])
        #expect(view.handle(B.removed(Self.device, ["org.bluez.Battery1"])) == .changed)
        #expect(view.devicesWithOtherBattery.isEmpty)
        #expect(view.handle(B.removed(B.hci1, ["org.bluez.BatteryProviderManager1"])) == .managerGone(adapterPath: B.hci1))
        #expect(view.managers.isEmpty)
        #expect(view.handle(B.nameOwnerChanged(old: ":1.7", new: ":1.9")) == .ownerChanged(":1.9"))
        #expect(view.handle(B.nameOwnerChanged(old: ":1.9", new: "")) == .ownerChanged(nil))
        // Only the bus driver says who owns a name.
        #expect(view.handle(B.nameOwnerChanged(old: ":1.9", new: ":1.66", from: ":1.66")) == .nothing)
    }

    @Test("An adapter removed: its manager goes, said even when the view did not know it; added again → the manager appears again")
    func adapterRemovedAndAdded() {
        var view = BlueZBatteryView()
        view.read(managedObjects: B.managedObjects([(B.hci0, Self.adapter(manager: true))]))
        #expect(view.handle(B.removed(B.hci0)) == .managerGone(adapterPath: B.hci0))
        #expect(view.managers.isEmpty)
        #expect(view.handle(B.removed(B.hci0)) == .managerGone(adapterPath: B.hci0))
        #expect(view.handle(B.added(B.hci0, Self.adapter(manager: true))) == .managerAppeared(adapterPath: B.hci0))
        #expect(view.managers == [B.hci0])
    }

    @Test("GetManagedObjects failed: the view is incomplete until the next read; signals fill it meanwhile")
    func readFailed() {
        var view = BlueZBatteryView()
        #expect(view.complete)
        view.readFailed()
        #expect(!view.complete)
        #expect(view.handle(B.added(B.hci0, Self.adapter(manager: true))) == .managerAppeared(adapterPath: B.hci0))
        #expect(view.managers == [B.hci0] && !view.complete)
        view.read(managedObjects: B.managedObjects([]))
        #expect(view.complete && view.managers.isEmpty)
        view.readFailed()
        #expect(view.handle(B.nameOwnerChanged(old: B.owner, new: "")) == .ownerChanged(nil))
        #expect(view.complete)
    }

    @Test("Hostile: a flood of batteries stays bounded; a malformed body or path changes nothing")
    func bounded() {
        var view = BlueZBatteryView()
        for index in 0..<(BlueZLimits.devices + 50) {
            _ = view.handle(B.added(B.devicePath(B.address(index)), Self.battery(source: "x")))
        }
        #expect(view.batterySources.count == BlueZLimits.devices)
        let before = view
        #expect(view.handle(DBusSignal(sender: B.owner, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", arguments: [.string("x")])) == .nothing)
        #expect(view.handle(B.added("/" + String(repeating: "a", count: BlueZLimits.pathBytes + 1), Self.battery(source: nil))) == .nothing)
        #expect(view == before)
    }
}
