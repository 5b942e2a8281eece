@testable import EarshotDaemon
import WireFields
import SystemBridge
import TestScheduling
import Testing

/// The bus-thread filter that keeps the mirror's queue to BlueZ's own signals.
@Suite("BlueZ signal filter", .blockingCalls)
struct BlueZSignalFilterTests {
    typealias B = BlueZBodies
    static let connected = ["Connected": DBusValue.boolean(true)]

    @Test("only the owner's signals pass; the bus driver's NameOwnerChanged for org.bluez passes and moves the owner")
    func ownerOnly() {
        let filter = BlueZSignalFilter()
        #expect(!filter.admits(B.propertiesChanged(B.hci0, changed: Self.connected, interface: "org.bluez.Device1")))
        filter.owner(is: B.owner)
        #expect(filter.admits(B.propertiesChanged(B.hci0, changed: Self.connected, interface: "org.bluez.Device1")))
        #expect(!filter.admits(B.propertiesChanged(B.hci0, changed: Self.connected, interface: "org.bluez.Device1", from: ":1.99")))
        #expect(!filter.admits(B.nameOwnerChanged(old: B.owner, new: ":1.99", from: ":1.99")))
        #expect(!filter.admits(B.nameOwnerChanged("org.example.other", old: "", new: ":1.99")))
        #expect(filter.admits(B.nameOwnerChanged(old: B.owner, new: ":1.8")))
        #expect(!filter.admits(B.added(B.hci0, B.adapterInterfaces(address: "11:22:33:44:55:66"))))
        #expect(filter.admits(B.added(B.hci0, B.adapterInterfaces(address: "11:22:33:44:55:66"), from: ":1.8")))
        #expect(filter.admits(B.nameOwnerChanged(old: ":1.8", new: "")))
        #expect(!filter.admits(B.removed(B.hci0, from: ":1.8")))
    }
}
