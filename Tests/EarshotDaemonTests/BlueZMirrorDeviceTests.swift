@testable import EarshotDaemon
import WireFields
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

/// BlueZ's Device1 objects from D-Bus bodies as bluetoothd sends them, without a bus: the
/// list the Bluetooth drivers are given.
@Suite("BlueZ mirror: devices", .blockingCalls)
struct BlueZMirrorDeviceTests {
    typealias B = BlueZBodies
    static let adapterA = "11:22:33:44:55:66"
    static let buds = "AA:BB:CC:DD:EE:01"
    static let speaker = "AA:BB:CC:DD:EE:02"
    static let budsPath = B.devicePath(buds)
    static let speakerPath = B.devicePath(speaker)
    static let a2dpSink = "0000110B-0000-1000-8000-00805F9B34FB"
    static let spp = "00001101-0000-1000-8000-00805f9b34fb"
    static let budsModalias = "bluetooth:v0075p0100d0001"

    static func info(
        _ address: String, name: String? = "Headset", connected: Bool = false, servicesResolved: Bool = false,
        uuids: [String] = [], modalias: String? = nil, adapter: String = B.hci0
    ) -> BluetoothDeviceInfo {
        BluetoothDeviceInfo(
            path: B.devicePath(address, adapter: adapter), address: BluetoothAddress(address)!, name: name,
            alias: name ?? address.replacingOccurrences(of: ":", with: "-"), connected: connected, servicesResolved: servicesResolved,
            uuids: uuids, modalias: modalias, adapterPath: adapter)
    }

    static func devices(_ list: BluetoothDeviceInfo...) -> BlueZMirror.Step {
        BlueZMirror.Step(devices: list)
    }

    /// A mirror that has read adapter hci0 and, disconnected, the buds.
    static func readingBuds() -> BlueZMirror {
        var mirror = BlueZMirror()
        _ = mirror.read(owner: B.owner, managedObjects: B.managedObjects([
            (B.hci0, B.adapterInterfaces(address: adapterA)),
            (budsPath, B.deviceInterfaces(B.deviceProperties(buds, name: "Buds", uuids: [a2dpSink], modalias: budsModalias))),
        ]))
        return mirror
    }

    @Test("GetManagedObjects: devices sorted by path with their properties; UUIDs lowercased; devices without an address or adapter left out")
    func managedObjectsReply() {
        var noAdapter = B.deviceProperties("AA:BB:CC:DD:EE:03")
        noAdapter["Adapter"] = nil
        let body = B.managedObjects([
            (B.hci0, B.adapterInterfaces(address: Self.adapterA)),
            (Self.speakerPath, B.deviceInterfaces(B.deviceProperties(Self.speaker, name: nil, connected: true, servicesResolved: true))),
            (Self.budsPath, B.deviceInterfaces(B.deviceProperties(
                Self.buds, name: "Buds", uuids: [Self.spp, Self.a2dpSink, Self.a2dpSink.lowercased()], modalias: Self.budsModalias))),
            (B.devicePath("AA:BB:CC:DD:EE:03"), B.deviceInterfaces(noAdapter)),
            (B.devicePath("AA:BB:CC:DD:EE:04"), B.deviceInterfaces(B.deviceProperties("not an address"))),
        ])
        var mirror = BlueZMirror()
        let step = mirror.read(owner: B.owner, managedObjects: body)
        #expect(step.hostAddresses?.count == 1)
        #expect(step.devices == [
            Self.info(Self.buds, name: "Buds", uuids: [Self.spp, Self.a2dpSink.lowercased()], modalias: Self.budsModalias),
            Self.info(Self.speaker, name: nil, connected: true, servicesResolved: true),
        ])
    }

    @Test("InterfacesAdded of a Device1 adds it; other interfaces on a device, or the same news again, change nothing")
    func deviceAdded() {
        var mirror = Self.readingBuds()
        let speaker = B.deviceInterfaces(B.deviceProperties(Self.speaker, name: "Speaker"))
        #expect(mirror.handle(B.added(Self.speakerPath, speaker)) == Self.devices(
            Self.info(Self.buds, name: "Buds", uuids: [Self.a2dpSink.lowercased()], modalias: Self.budsModalias),
            Self.info(Self.speaker, name: "Speaker")))
        #expect(mirror.handle(B.added(Self.speakerPath, speaker)) == .nothing)
        #expect(mirror.handle(B.added(Self.speakerPath + "/fd0", B.interfaces(["org.bluez.MediaTransport1": ["State": .string("idle")]]))) == .nothing)
        #expect(mirror.handle(B.added(Self.speakerPath, B.interfaces(["org.bluez.Battery1": ["Percentage": .byte(50)]]))) == .nothing)
        #expect(mirror.deviceList.count == 2)
    }

    @Test("PropertiesChanged: Connected true then false; partial updates merge; properties nobody keeps change nothing")
    func connectedFlips() {
        var mirror = Self.readingBuds()
        let disconnected = Self.info(Self.buds, name: "Buds", uuids: [Self.a2dpSink.lowercased()], modalias: Self.budsModalias)
        var connected = disconnected
        connected.connected = true
        let device = "org.bluez.Device1"
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(true)], interface: device)) == Self.devices(connected))
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(true)], interface: device)) == .nothing)
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["RSSI": .int16(-60), "Trusted": .boolean(true)], interface: device)) == .nothing)
        // Another interface's Connected (a MediaControl1, say) is not the device's.
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(false)], interface: "org.bluez.MediaControl1")) == .nothing)
        var renamed = connected
        renamed.alias = "My buds"
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Alias": .string("My buds")], interface: device)) == Self.devices(renamed))
        renamed.connected = false
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(false)], interface: device)) == Self.devices(renamed))
        // A value of the wrong type counts as not said.
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .string("yes")], interface: device)) == .nothing)
    }

    @Test("a new device's UUIDs arrive after it connects, with ServicesResolved")
    func uuidsArriveLater() {
        var mirror = Self.readingBuds()
        let device = "org.bluez.Device1"
        let fresh = B.deviceProperties(Self.speaker, name: nil)
        _ = mirror.handle(B.added(Self.speakerPath, B.deviceInterfaces(fresh)))
        #expect(mirror.deviceList.last == Self.info(Self.speaker, name: nil))
        _ = mirror.handle(B.propertiesChanged(Self.speakerPath, changed: ["Connected": .boolean(true)], interface: device))
        let resolved = mirror.handle(B.propertiesChanged(
            Self.speakerPath, changed: ["UUIDs": .strings([Self.spp.uppercased(), Self.a2dpSink]), "ServicesResolved": .boolean(true), "Name": .string("Speaker")],
            interface: device))
        #expect(resolved.devices?.last == Self.info(
            Self.speaker, name: "Speaker", connected: true, servicesResolved: true, uuids: [Self.spp, Self.a2dpSink.lowercased()]).with(alias: "AA-BB-CC-DD-EE-02"))
        #expect(resolved.hostAddresses == nil)
    }

    @Test("invalidated properties become unknown: a Name gone is nil, an Address gone hides the device until it is said again")
    func invalidated() {
        var mirror = Self.readingBuds()
        let device = "org.bluez.Device1"
        let step = mirror.handle(B.propertiesChanged(Self.budsPath, changed: [:], invalidated: ["Name", "Modalias", "RSSI"], interface: device))
        #expect(step == Self.devices(Self.info(Self.buds, name: nil, uuids: [Self.a2dpSink.lowercased()]).with(alias: "Buds")))
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: [:], invalidated: ["Address"], interface: device)) == Self.devices())
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Address": .string(Self.buds)], interface: device)).devices?.count == 1)
    }

    @Test("InterfacesRemoved of a Device1 removes it; of another interface on it, nothing")
    func deviceRemoved() {
        var mirror = Self.readingBuds()
        #expect(mirror.handle(B.removed(Self.budsPath, ["org.bluez.Battery1"])) == .nothing)
        #expect(mirror.handle(B.removed(Self.budsPath, ["org.freedesktop.DBus.Properties", "org.bluez.Device1", "org.bluez.Battery1"])) == Self.devices())
        #expect(mirror.devices.isEmpty)
        #expect(mirror.handle(B.removed(Self.budsPath, ["org.bluez.Device1"])) == .nothing)
        // A device no longer tracked: its property changes are ignored.
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(true)], interface: "org.bluez.Device1")) == .nothing)
    }

    @Test("an adapter removed takes its devices along, in the same step as the host addresses")
    func deviceOnRemovedAdapter() {
        var mirror = Self.readingBuds()
        let onHCI1 = B.devicePath(Self.speaker, adapter: B.hci1)
        _ = mirror.handle(B.added(B.hci1, B.adapterInterfaces(address: "22:33:44:55:66:77")))
        _ = mirror.handle(B.added(onHCI1, B.deviceInterfaces(B.deviceProperties(Self.speaker, adapter: B.hci1, name: "Speaker"))))
        #expect(mirror.deviceList.count == 2)
        let step = mirror.handle(B.removed(B.hci0))
        #expect(step.hostAddresses?.map(\.address.description) == ["22:33:44:55:66:77"])
        #expect(step.devices == [Self.info(Self.speaker, name: "Speaker", adapter: B.hci1)])
    }

    @Test("device signals from anyone but org.bluez's owner are ignored")
    func impostorsIgnored() {
        var mirror = Self.readingBuds()
        let intruder = ":1.99"
        #expect(mirror.handle(B.added(Self.speakerPath, B.deviceInterfaces(B.deviceProperties(Self.speaker)), from: intruder)) == .nothing)
        #expect(mirror.handle(B.propertiesChanged(Self.budsPath, changed: ["Connected": .boolean(true)], interface: "org.bluez.Device1", from: intruder)) == .nothing)
        #expect(mirror.handle(B.removed(Self.budsPath, ["org.bluez.Device1"], from: intruder)) == .nothing)
        #expect(mirror.handle(B.removed(B.hci0, from: intruder)) == .nothing)
        #expect(mirror.deviceList == [Self.info(Self.buds, name: "Buds", uuids: [Self.a2dpSink.lowercased()], modalias: Self.budsModalias)])
    }

    @Test("BlueZ leaving clears adapters and devices; reappearing re-reads, keeping the old list meanwhile")
    func serviceComesAndGoes() {
        var mirror = Self.readingBuds()
        let buds = Self.info(Self.buds, name: "Buds", uuids: [Self.a2dpSink.lowercased()], modalias: Self.budsModalias)
        #expect(mirror.handle(B.nameOwnerChanged(old: B.owner, new: ":1.8")) == .reread)
        #expect(mirror.deviceList == [buds])
        // The restarted BlueZ lists the same objects: nothing to hand on.
        let same = B.managedObjects([
            (B.hci0, B.adapterInterfaces(address: Self.adapterA)),
            (Self.budsPath, B.deviceInterfaces(B.deviceProperties(Self.buds, name: "Buds", uuids: [Self.a2dpSink], modalias: Self.budsModalias))),
        ])
        #expect(mirror.read(owner: ":1.8", managedObjects: same) == .nothing)
        // Only the new owner counts now.
        #expect(mirror.handle(B.removed(Self.budsPath, ["org.bluez.Device1"])) == .nothing)
        #expect(mirror.handle(B.nameOwnerChanged(old: ":1.8", new: "")) == BlueZMirror.Step(hostAddresses: [], devices: []))
        #expect(mirror.devices.isEmpty && mirror.adapters.isEmpty && mirror.owner == nil)
        #expect(mirror.handle(B.added(Self.budsPath, B.deviceInterfaces(B.deviceProperties(Self.buds)), from: ":1.8")) == .nothing)
        #expect(mirror.handle(B.nameOwnerChanged(old: "", new: ":1.9")) == .reread)
        let back = mirror.read(owner: ":1.9", managedObjects: same)
        #expect(back.devices == [buds])
        #expect(back.hostAddresses?.count == 1)
    }

    @Test("at most BlueZLimits.devices devices are kept; reaching the limit is reported once")
    func deviceLimit() {
        let many = (0...BlueZLimits.devices).map { index in
            (B.devicePath(B.address(index)), B.deviceInterfaces(B.deviceProperties(B.address(index))))
        }
        var mirror = BlueZMirror()
        let step = mirror.read(owner: B.owner, managedObjects: B.managedObjects(many))
        #expect(step.devices?.count == BlueZLimits.devices)
        #expect(step.limitsReached == [.devices])
        // The one left out is the last by path; it and any newcomer stay out while full.
        let newcomer = B.deviceInterfaces(B.deviceProperties(Self.speaker))
        #expect(mirror.handle(B.added(Self.speakerPath, newcomer)) == .nothing)
        #expect(mirror.deviceList.last?.address == BluetoothAddress(B.address(BlueZLimits.devices - 1)))
        // Reported once in the mirror's life, even after a re-read.
        #expect(mirror.read(owner: B.owner, managedObjects: B.managedObjects(many)).limitsReached.isEmpty)
        // Room again once one leaves.
        #expect(mirror.handle(B.removed(B.devicePath(B.address(0)), ["org.bluez.Device1"])).devices?.count == BlueZLimits.devices - 1)
        #expect(mirror.handle(B.added(Self.speakerPath, newcomer)).devices?.count == BlueZLimits.devices)
    }

    @Test("oversized values: names cut on a character boundary, long Modalias, UUIDs and paths dropped, UUID lists capped")
    func valueLimits() {
        let longName = String(repeating: "é", count: 200)  // 400 UTF-8 bytes
        let uuids = (0..<100).map { index in "0000\(String(index + 0x1000, radix: 16))-0000-1000-8000-00805f9b34fb" } + ["x" + Self.spp]
        var properties = B.deviceProperties(Self.buds, name: longName, uuids: uuids, modalias: "bluetooth:" + String(repeating: "v", count: 100))
        properties["Alias"] = .string(longName)
        var mirror = BlueZMirror()
        let step = mirror.read(owner: B.owner, managedObjects: B.managedObjects([
            (Self.budsPath, B.deviceInterfaces(properties)),
            ("/org/bluez/hci0/" + String(repeating: "d", count: BlueZLimits.pathBytes), B.deviceInterfaces(B.deviceProperties(Self.speaker))),
        ]))
        let device = step.devices?.first
        #expect(step.devices?.count == 1)
        #expect(device?.name == String(repeating: "é", count: BlueZLimits.nameBytes / 2))
        #expect(device?.alias == device?.name)
        #expect(device?.modalias == nil)
        #expect(device?.uuids.count == BlueZLimits.uuids)
        #expect(device?.uuids.allSatisfy { $0.utf8.count == 36 } == true)
        #expect(BlueZDeviceProperties.cut("abcé", toBytes: 4) == "abc")
        #expect(BlueZDeviceProperties.cut("abc", toBytes: 4) == "abc")
        // Signals about an oversized path are ignored too.
        let longPath = "/org/bluez/hci0/" + String(repeating: "d", count: BlueZLimits.pathBytes)
        #expect(mirror.handle(B.added(longPath, B.deviceInterfaces(B.deviceProperties(Self.speaker)))) == .nothing)
    }
}

extension BluetoothDeviceInfo {
    func with(alias: String?) -> BluetoothDeviceInfo {
        var copy = self
        copy.alias = alias
        return copy
    }
}
