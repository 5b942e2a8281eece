import RoutingPolicy
import SystemBridge

/// The adapters and devices in a `GetManagedObjects` reply or an `InterfacesAdded` signal.
/// Objects without Adapter1 or Device1, adapters whose Address is missing or malformed and
/// paths longer than `BlueZLimits.pathBytes` are left out; the mirror applies the count limits.
struct BlueZObjects: Equatable {
    /// Adapter object path → address.
    var adapters: [String: BluetoothAddress] = [:]
    /// Device object path → its properties.
    var devices: [String: BlueZDeviceProperties] = [:]

    init() {}

    /// A `GetManagedObjects` reply body (`a{oa{sa{sv}}}`); nil when it is not such a
    /// dictionary at all.
    init?(managedObjects body: [DBusValue]) {
        guard let objects = body.first?.dictionary else { return nil }
        for (path, interfaces) in objects where path.utf8.count <= BlueZLimits.pathBytes {
            add(path: path, interfaces: interfaces)
        }
    }

    /// One object's interfaces (`a{sa{sv}}`).
    init(path: String, interfaces: DBusValue) {
        add(path: path, interfaces: interfaces)
    }

    private mutating func add(path: String, interfaces: DBusValue) {
        guard let interfaces = interfaces.dictionary else { return }
        if let adapter = interfaces[BlueZInterface.adapter]?.dictionary,
            let text = adapter[BlueZInterface.addressProperty]?.string, let address = BluetoothAddress(text)
        {
            adapters[path] = address
        }
        if let device = interfaces[BlueZInterface.device]?.dictionary {
            devices[path] = BlueZDeviceProperties(device)
        }
    }
}
