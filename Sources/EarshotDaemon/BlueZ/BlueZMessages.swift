import RoutingPolicy
import SystemBridge

/// What one message from the bus says about BlueZ's adapters, read from its D-Bus body.
/// Pure: no bus, no state.
enum BlueZMessage: Equatable {
    /// An adapter appeared, or its address changed.
    case adapterAddress(path: String, BluetoothAddress)
    case adapterRemoved(path: String)
    /// A new owner of org.bluez (bluetoothd started): its adapters must be read.
    case serviceAppeared(owner: String)
    case serviceVanished
    /// An adapter's address was invalidated without its value: read everything again.
    case rereadNeeded

    /// The adapters in a `GetManagedObjects` reply (`a{oa{sa{sv}}}`): object path → address.
    /// Objects without Adapter1, or whose Address is missing or malformed, are left out; nil
    /// when the reply is not such a dictionary at all.
    static func adapters(inManagedObjects body: [DBusValue]) -> [String: BluetoothAddress]? {
        guard let objects = body.first?.dictionary else { return nil }
        var adapters: [String: BluetoothAddress] = [:]
        for (path, interfaces) in objects {
            if let address = adapterAddress(inInterfaces: interfaces) { adapters[path] = address }
        }
        return adapters
    }

    /// Reads a signal the watcher matched; nil for anything that says nothing about adapters
    /// (another object's interfaces, another name's owner, a malformed body).
    static func read(_ signal: DBusSignal) -> BlueZMessage? {
        let arguments = signal.arguments
        switch (signal.interface, signal.member) {
        case (BlueZInterface.busDriver, "NameOwnerChanged"):
            guard arguments.count == 3, arguments[0].string == BlueZInterface.service, let owner = arguments[2].string else { return nil }
            return owner.isEmpty ? .serviceVanished : .serviceAppeared(owner: owner)
        case (BlueZInterface.objectManager, "InterfacesAdded"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = arguments[0].string,
                let address = adapterAddress(inInterfaces: arguments[1])
            else { return nil }
            return .adapterAddress(path: path, address)
        case (BlueZInterface.objectManager, "InterfacesRemoved"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = arguments[0].string,
                arguments[1].stringList?.contains(BlueZInterface.adapter) == true
            else { return nil }
            return .adapterRemoved(path: path)
        case (BlueZInterface.properties, "PropertiesChanged"):
            guard arguments.count == 3, arguments[0].string == BlueZInterface.adapter else { return nil }
            if let text = arguments[1].dictionary?[BlueZInterface.addressProperty]?.string, let address = BluetoothAddress(text) {
                return .adapterAddress(path: signal.path, address)
            }
            if arguments[2].stringList?.contains(BlueZInterface.addressProperty) == true { return .rereadNeeded }
            return nil
        default:
            return nil
        }
    }

    /// The Address of an object's Adapter1 in an `a{sa{sv}}` interface map.
    private static func adapterAddress(inInterfaces interfaces: DBusValue) -> BluetoothAddress? {
        guard let adapter = interfaces.dictionary?[BlueZInterface.adapter]?.dictionary,
            let text = adapter[BlueZInterface.addressProperty]?.string
        else { return nil }
        return BluetoothAddress(text)
    }
}
