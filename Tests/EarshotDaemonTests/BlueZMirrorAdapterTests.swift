@testable import EarshotDaemon
import WireFields
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

/// BlueZ's adapters, as this host's addresses, from D-Bus bodies as BlueZ sends them, without
/// a bus.
@Suite("BlueZ mirror: adapters", .blockingCalls)
struct BlueZMirrorAdapterTests {
    typealias B = BlueZBodies
    static let a = "11:22:33:44:55:66"
    static let b = "22:33:44:55:66:77"

    static func publish(_ entries: (String, String)...) -> BlueZMirror.Step {
        BlueZMirror.Step(hostAddresses: entries.map { HostAddress(BluetoothAddress($0.1)!, from: [.bluez(adapter: $0.0)]) })
    }

    /// A mirror that has read hci0 = A from owner :1.7.
    static func readingHCI0() -> BlueZMirror {
        var mirror = BlueZMirror()
        _ = mirror.read(owner: B.owner, managedObjects: B.managedObjects([(B.hci0, B.adapterInterfaces(address: a))]))
        return mirror
    }

    @Test("GetManagedObjects: adapters by path; objects without Adapter1 and bad addresses left out")
    func managedObjectsReply() {
        let body = B.managedObjects([
            ("/", B.adapterInterfaces(address: nil, adapter: false)),
            (B.hci1, B.adapterInterfaces(address: Self.b)),
            (B.hci0, B.adapterInterfaces(address: Self.a.lowercased())),
            ("/org/bluez/hci2", B.adapterInterfaces(address: "not an address")),
            ("/org/bluez/hci3", B.adapterInterfaces(address: nil)),
            // A device without its Adapter property is not published (nor is an adapter).
            ("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(["Address": .string("AA:BB:CC:DD:EE:FF")]))])),
        ])
        var mirror = BlueZMirror()
        #expect(mirror.read(owner: B.owner, managedObjects: body) == Self.publish(("hci0", Self.a), ("hci1", Self.b)))
        #expect(BlueZObjects(managedObjects: [.string("nonsense")]) == nil)
    }

    @Test("adapters plugged and unplugged change the set; an incomplete device or repeated news changes nothing")
    func pluggedAndUnplugged() {
        var mirror = Self.readingHCI0()
        #expect(mirror.handle(B.added(B.hci1, B.adapterInterfaces(address: Self.b))) == Self.publish(("hci0", Self.a), ("hci1", Self.b)))
        #expect(mirror.handle(B.added(B.hci1, B.adapterInterfaces(address: Self.b))) == .nothing)
        #expect(mirror.handle(B.added("/org/bluez/hci0/dev_AA", .array(element: "{sa{sv}}", [.dictEntry(.string("org.bluez.Device1"), .properties(["Address": .string(Self.b)]))]))) == .nothing)
        #expect(mirror.handle(B.removed("/org/bluez/hci0/dev_AA", ["org.bluez.Device1"])) == .nothing)
        #expect(mirror.handle(B.removed(B.hci0)) == Self.publish(("hci1", Self.b)))
        #expect(mirror.handle(B.removed(B.hci0)) == .nothing)
    }

    @Test("an adapter's Address changing in PropertiesChanged; invalidated asks for a re-read; other properties change nothing")
    func addressChanges() {
        var mirror = Self.readingHCI0()
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: ["Address": .string(Self.b)])) == Self.publish(("hci0", Self.b)))
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: ["Powered": .boolean(false)])) == .nothing)
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: [:], invalidated: ["Address"])) == .reread)
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: ["Address": .string(Self.a)], interface: "org.bluez.Device1")) == .nothing)
    }

    @Test("BlueZ vanishing drops its adapters; appearing asks for a re-read and keeps the old ones meanwhile")
    func serviceComesAndGoes() {
        var mirror = Self.readingHCI0()
        #expect(mirror.handle(B.nameOwnerChanged("org.example.other", old: "", new: ":1.9")) == .nothing)
        #expect(mirror.handle(B.nameOwnerChanged(old: B.owner, new: "")) == BlueZMirror.Step(hostAddresses: []))
        #expect(mirror.owner == nil)
        #expect(mirror.handle(B.nameOwnerChanged(old: "", new: ":1.8")) == .reread)
        #expect(mirror.owner == ":1.8")
        #expect(mirror.hostAddresses.isEmpty)
        #expect(mirror.read(owner: ":1.8", managedObjects: B.managedObjects([(B.hci0, B.adapterInterfaces(address: Self.a))]))
            == Self.publish(("hci0", Self.a)))
    }

    @Test("a restarting BlueZ keeps the adapters until the re-read, which changes nothing when they are the same")
    func restartKeepsAdapters() {
        var mirror = Self.readingHCI0()
        #expect(mirror.handle(B.nameOwnerChanged(old: B.owner, new: ":1.8")) == .reread)
        #expect(mirror.hostAddresses.map(\.address.description) == [Self.a])
        #expect(mirror.read(owner: ":1.8", managedObjects: B.managedObjects([(B.hci0, B.adapterInterfaces(address: Self.a))])) == .nothing)
    }

    @Test("signals from anyone but org.bluez's owner, or before BlueZ is known, are ignored; only the bus says who owns org.bluez")
    func impostorsIgnored() {
        var mirror = Self.readingHCI0()
        #expect(mirror.handle(B.added("/org/bluez/hci9", B.adapterInterfaces(address: Self.b), from: ":1.99")) == .nothing)
        #expect(mirror.handle(B.removed(B.hci0, from: ":1.99")) == .nothing)
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: ["Address": .string(Self.b)], from: ":1.99")) == .nothing)
        #expect(mirror.handle(B.propertiesChanged(B.hci0, changed: [:], invalidated: ["Address"], from: ":1.99")) == .nothing)
        #expect(mirror.handle(B.nameOwnerChanged(old: B.owner, new: "", from: ":1.99")) == .nothing)
        #expect(mirror.handle(B.nameOwnerChanged(old: B.owner, new: ":1.99", from: ":1.99")) == .nothing)
        #expect(mirror.owner == B.owner)
        var fresh = BlueZMirror()
        #expect(fresh.absent() == .nothing)
        #expect(fresh.handle(B.added(B.hci0, B.adapterInterfaces(address: Self.a))) == .nothing)
    }

    @Test("at most BlueZLimits.adapters adapters are kept; reaching the limit is reported once")
    func adapterLimit() {
        let many = (0...BlueZLimits.adapters).map { index in ("/org/bluez/hci\(index)", B.adapterInterfaces(address: B.address(index))) }
        var mirror = BlueZMirror()
        let step = mirror.read(owner: B.owner, managedObjects: B.managedObjects(many))
        #expect(step.hostAddresses?.count == BlueZLimits.adapters)
        #expect(step.limitsReached == [.adapters])
        #expect(mirror.handle(B.added("/org/bluez/hci999", B.adapterInterfaces(address: Self.a))) == .nothing)
        // Room again once one leaves.
        #expect(mirror.handle(B.removed(B.hci0)).hostAddresses?.count == BlueZLimits.adapters - 1)
        #expect(mirror.handle(B.added("/org/bluez/hci999", B.adapterInterfaces(address: Self.a))).hostAddresses?.count == BlueZLimits.adapters)
    }
}
