@testable import EarshotDaemon
import WireFields
import RoutingPolicy
import SystemBridge

/// D-Bus bodies and signals as BlueZ and the bus driver send them, for the mirror's tests.
enum BlueZBodies {
    static let owner = ":1.7"
    static let hci0 = "/org/bluez/hci0"
    static let hci1 = "/org/bluez/hci1"

    /// `00:00:00:00:XX:YY`, a distinct address for each `index` below 65536.
    static func address(_ index: Int) -> String {
        let hex = String(index, radix: 16, uppercase: true)
        let digits = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return "00:00:00:00:\(digits.prefix(2)):\(digits.suffix(2))"
    }

    /// An object's interfaces (`a{sa{sv}}`), with Introspectable as BlueZ lists it.
    static func interfaces(_ entries: [String: [String: DBusValue]]) -> DBusValue {
        var all = entries
        all["org.freedesktop.DBus.Introspectable"] = [:]
        return .array(element: "{sa{sv}}", all.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .properties($0.value)) })
    }

    /// An adapter object's interfaces; no Adapter1 at all when `adapter` is false.
    static func adapterInterfaces(address: String?, adapter: Bool = true) -> DBusValue {
        guard adapter else { return interfaces([:]) }
        var properties: [String: DBusValue] = ["Name": .string("host"), "Powered": .boolean(true)]
        if let address { properties["Address"] = .string(address) }
        return interfaces(["org.bluez.Adapter1": properties])
    }

    /// A Device1 property map as bluetoothd sends it (plus properties the mirror ignores).
    static func deviceProperties(
        _ address: String, adapter: String = hci0, name: String? = "Headset", connected: Bool = false,
        servicesResolved: Bool = false, uuids: [String] = [], modalias: String? = nil
    ) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            "Address": .string(address), "AddressType": .string("public"), "Alias": .string(name ?? address.replacingOccurrences(of: ":", with: "-")),
            "Paired": .boolean(true), "Trusted": .boolean(false), "Blocked": .boolean(false), "LegacyPairing": .boolean(false),
            "Connected": .boolean(connected), "ServicesResolved": .boolean(servicesResolved),
            "UUIDs": .strings(uuids), "Adapter": .objectPath(adapter), "Class": .uint32(0x240404),
        ]
        if let name { properties["Name"] = .string(name) }
        if let modalias { properties["Modalias"] = .string(modalias) }
        return properties
    }

    static func deviceInterfaces(_ properties: [String: DBusValue]) -> DBusValue {
        interfaces(["org.bluez.Device1": properties, "org.bluez.Battery1": ["Percentage": .byte(80)]])
    }

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` for `AA:BB:CC:DD:EE:FF`.
    static func devicePath(_ address: String, adapter: String = hci0) -> String {
        adapter + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
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

    static func propertiesChanged(
        _ path: String, changed: [String: DBusValue], invalidated: [String] = [], interface: String = "org.bluez.Adapter1", from sender: String = owner
    ) -> DBusSignal {
        DBusSignal(sender: sender, path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                   arguments: [.string(interface), .properties(changed), .strings(invalidated)])
    }

    static func nameOwnerChanged(_ name: String = "org.bluez", old: String, new: String, from sender: String = "org.freedesktop.DBus") -> DBusSignal {
        DBusSignal(sender: sender, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                   arguments: [.string(name), .string(old), .string(new)])
    }
}
