@testable import EarshotDaemon
import RoutingPolicy
import SystemBridge
import Testing

/// BlueZ's adapters from D-Bus bodies as BlueZ sends them, without a bus.
@Suite("BlueZ adapter tracker")
struct BlueZAdapterTrackerTests {
    static let owner = ":1.7"
    static let a = "11:22:33:44:55:66"
    static let b = "22:33:44:55:66:77"

    static func interfaces(address: String?, adapter: Bool = true) -> DBusValue {
        var entries: [DBusValue] = [.dictEntry(.string("org.freedesktop.DBus.Introspectable"), .properties([:]))]
        if adapter {
            var properties: [String: DBusValue] = ["Name": .string("host"), "Powered": .boolean(true)]
            if let address { properties["Address"] = .string(address) }
            entries.append(.dictEntry(.string("org.bluez.Adapter1"), .properties(properties)))
        }
        return .array(element: "{sa{sv}}", entries)
    }

    /// A `GetManagedObjects` reply body (`a{oa{sa{sv}}}`).
    static func managedObjects(_ objects: [(String, DBusValue)]) -> [DBusValue] {
        [.array(element: "{oa{sa{sv}}}", objects.map { .dictEntry(.objectPath($0.0), $0.1) })]
    }

    static func added(_ path: String, _ interfaces: DBusValue, from sender: String = owner) -> DBusSignal {
        DBusSignal(sender: sender, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", arguments: [.objectPath(path), interfaces])
    }

    static func removed(_ path: String, _ names: [String] = ["org.bluez.Adapter1", "org.freedesktop.DBus.Properties"], from sender: String = owner) -> DBusSignal {
        DBusSignal(sender: sender, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                   arguments: [.objectPath(path), .array(element: "s", names.map(DBusValue.string))])
    }

    static func propertiesChanged(_ path: String, changed: [String: DBusValue], invalidated: [String] = [], interface: String = "org.bluez.Adapter1") -> DBusSignal {
        DBusSignal(sender: owner, path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                   arguments: [.string(interface), .properties(changed), .strings(invalidated)])
    }

    static func nameOwnerChanged(_ name: String = "org.bluez", old: String, new: String) -> DBusSignal {
        DBusSignal(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                   arguments: [.string(name), .string(old), .string(new)])
    }

    static func publish(_ entries: (String, String)...) -> BlueZAdapterTracker.Step {
        .publish(entries.map { HostAddress(BluetoothAddress($0.1)!, from: [.bluez(adapter: $0.0)]) })
    }

    /// A tracker that has read hci0 = A from owner :1.7.
    static func readingHCI0() -> BlueZAdapterTracker {
        var tracker = BlueZAdapterTracker()
        _ = tracker.read(owner: owner, managedObjects: managedObjects([("/org/bluez/hci0", interfaces(address: a))]))
        return tracker
    }

    @Test("GetManagedObjects: adapters by path; devices, objects without Adapter1 and bad addresses left out")
    func managedObjectsReply() {
        let body = Self.managedObjects([
            ("/", Self.interfaces(address: nil, adapter: false)),
            ("/org/bluez/hci1", Self.interfaces(address: Self.b)),
            ("/org/bluez/hci0", Self.interfaces(address: Self.a.lowercased())),
            ("/org/bluez/hci2", Self.interfaces(address: "not an address")),
            ("/org/bluez/hci3", Self.interfaces(address: nil)),
            ("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(["Address": .string("AA:BB:CC:DD:EE:FF")]))])),
        ])
        var tracker = BlueZAdapterTracker()
        #expect(tracker.read(owner: Self.owner, managedObjects: body) == Self.publish(("hci0", Self.a), ("hci1", Self.b)))
        #expect(BlueZMessage.adapters(inManagedObjects: [.string("nonsense")]) == nil)
    }

    @Test("adapters plugged and unplugged change the set; a device or repeated news changes nothing")
    func pluggedAndUnplugged() {
        var tracker = Self.readingHCI0()
        #expect(tracker.handle(Self.added("/org/bluez/hci1", Self.interfaces(address: Self.b))) == Self.publish(("hci0", Self.a), ("hci1", Self.b)))
        #expect(tracker.handle(Self.added("/org/bluez/hci1", Self.interfaces(address: Self.b))) == .nothing)
        #expect(tracker.handle(Self.added("/org/bluez/hci0/dev_AA", .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(["Address": .string(Self.b)]))]))) == .nothing)
        #expect(tracker.handle(Self.removed("/org/bluez/hci0/dev_AA", ["org.bluez.Device1"])) == .nothing)
        #expect(tracker.handle(Self.removed("/org/bluez/hci0")) == Self.publish(("hci1", Self.b)))
        #expect(tracker.handle(Self.removed("/org/bluez/hci0")) == .nothing)
    }

    @Test("an adapter's Address changing in PropertiesChanged; invalidated asks for a re-read; other properties change nothing")
    func addressChanges() {
        var tracker = Self.readingHCI0()
        #expect(tracker.handle(Self.propertiesChanged("/org/bluez/hci0", changed: ["Address": .string(Self.b)])) == Self.publish(("hci0", Self.b)))
        #expect(tracker.handle(Self.propertiesChanged("/org/bluez/hci0", changed: ["Powered": .boolean(false)])) == .nothing)
        #expect(tracker.handle(Self.propertiesChanged("/org/bluez/hci0", changed: [:], invalidated: ["Address"])) == .reread)
        #expect(tracker.handle(Self.propertiesChanged("/org/bluez/hci0", changed: ["Address": .string(Self.a)], interface: "org.bluez.Device1")) == .nothing)
    }

    @Test("BlueZ vanishing drops its adapters; appearing asks for a re-read and keeps the old ones meanwhile")
    func serviceComesAndGoes() {
        var tracker = Self.readingHCI0()
        #expect(tracker.handle(Self.nameOwnerChanged("org.example.other", old: "", new: ":1.9")) == .nothing)
        #expect(tracker.handle(Self.nameOwnerChanged(old: Self.owner, new: "")) == .publish([]))
        #expect(tracker.owner == nil)
        #expect(tracker.handle(Self.nameOwnerChanged(old: "", new: ":1.8")) == .reread)
        #expect(tracker.owner == ":1.8")
        #expect(tracker.read(owner: ":1.8", managedObjects: Self.managedObjects([("/org/bluez/hci0", Self.interfaces(address: Self.a))]))
            == Self.publish(("hci0", Self.a)))
    }

    @Test("signals from anyone but org.bluez's owner, or before BlueZ is known, are ignored")
    func impostorsIgnored() {
        var tracker = Self.readingHCI0()
        #expect(tracker.handle(Self.added("/org/bluez/hci9", Self.interfaces(address: Self.b), from: ":1.99")) == .nothing)
        #expect(tracker.handle(Self.removed("/org/bluez/hci0", from: ":1.99")) == .nothing)
        var fresh = BlueZAdapterTracker()
        #expect(fresh.absent() == .nothing)
        #expect(fresh.handle(Self.added("/org/bluez/hci0", Self.interfaces(address: Self.a))) == .nothing)
    }
}
