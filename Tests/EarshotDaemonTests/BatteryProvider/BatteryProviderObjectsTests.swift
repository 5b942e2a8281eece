@testable import EarshotDaemon
import SystemBridge
import Testing

/// The provider's objects as BlueZ (and anyone) reads them, without a bus.
@Suite("Battery provider: the D-Bus objects")
struct BatteryProviderObjectsTests {
    typealias O = BatteryProviderObjects
    static let childPath = "/org/earshot/battery/dev_AA_BB_CC_DD_EE_01"
    static let child = BatteryProviderPlan.Child(devicePath: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01", percentage: 42)
    static let children = [childPath: child]

    static func ask(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) -> O.Answer {
        O.answer(path: path, interface: interface, member: member, arguments: arguments, children: children)
    }

    @Test("GetManagedObjects at the root: each child with BatteryProvider1 Percentage (y), Device (o), Source (s)")
    func managedObjects() throws {
        guard case .values(let values) = Self.ask("/org/earshot/battery", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects") else {
            Issue.record("no values")
            return
        }
        #expect(values.first?.signature == "a{oa{sa{sv}}}")
        let objects = try #require(values.first?.dictionary)
        let properties = try #require(objects[Self.childPath]?.dictionary?["org.bluez.BatteryProvider1"]?.dictionary)
        #expect(properties["Percentage"] == .byte(42))
        #expect(properties["Device"] == .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"))
        #expect(properties["Source"] == .string("Earshot"))
    }

    @Test("Properties of a child: Get, GetAll; read-only; a gone child is UnknownObject; other methods UnknownMethod")
    func properties() {
        let props = "org.freedesktop.DBus.Properties"
        #expect(Self.ask(Self.childPath, props, "Get", [.string("org.bluez.BatteryProvider1"), .string("Percentage")]) == .values([.variant(.byte(42))]))
        guard case .values(let all) = Self.ask(Self.childPath, props, "GetAll", [.string("org.bluez.BatteryProvider1")]) else {
            Issue.record("no values")
            return
        }
        #expect(all.first?.dictionary?.count == 3)
        #expect(Self.ask(Self.childPath, props, "GetAll", [.string("org.example.Other")]) == .values([.properties([:])]))
        if case .error(let name, _) = Self.ask(Self.childPath, props, "Get", [.string("org.bluez.BatteryProvider1"), .string("Nope")]) {
            #expect(name == "org.freedesktop.DBus.Error.InvalidArgs")
        } else { Issue.record("Get of an unknown property answered") }
        if case .error(let name, _) = Self.ask(Self.childPath, props, "Set", [.string("org.bluez.BatteryProvider1"), .string("Percentage"), .variant(.byte(1))]) {
            #expect(name == "org.freedesktop.DBus.Error.PropertyReadOnly")
        } else { Issue.record("Set answered") }
        if case .error(let name, _) = Self.ask("/org/earshot/battery/dev_00_00_00_00_00_00", props, "GetAll", [.string("org.bluez.BatteryProvider1")]) {
            #expect(name == "org.freedesktop.DBus.Error.UnknownObject")
        } else { Issue.record("a gone child answered") }
        if case .error(let name, _) = Self.ask("/org/earshot/battery", "org.example.X", "Y") {
            #expect(name == "org.freedesktop.DBus.Error.UnknownMethod")
        } else { Issue.record("an unknown method answered") }
    }

    @Test("Signals: InterfacesAdded (oa{sa{sv}}), InterfacesRemoved (oas), PropertiesChanged (sa{sv}as) of Percentage only")
    func signals() {
        #expect(O.added(Self.childPath, Self.child).map(\.signature) == ["o", "a{sa{sv}}"])
        #expect(O.removed(Self.childPath) == [.objectPath(Self.childPath), .strings(["org.bluez.BatteryProvider1"])])
        #expect(O.percentageChanged(7) == [.string("org.bluez.BatteryProvider1"), .properties(["Percentage": .byte(7)]), .strings([])])
    }
}
