import RoutingPolicy
import SystemBridge

/// What one message from the bus says about BlueZ's adapters and devices, read from its D-Bus
/// body. Pure: no bus, no state.
enum BlueZMessage: Equatable {
    /// An adapter appeared, or its address changed.
    case adapterAddress(path: String, BluetoothAddress)
    case adapterRemoved(path: String)
    /// A device appeared (or was announced again) with all its properties.
    case deviceAdded(path: String, BlueZDeviceProperties)
    /// Some of a device's properties changed (`changed` holds those said) or were invalidated.
    case deviceChanged(path: String, changed: BlueZDeviceProperties, invalidated: [String])
    case deviceRemoved(path: String)
    /// A new owner of org.bluez (bluetoothd started): everything must be read.
    case serviceAppeared(owner: String)
    case serviceVanished
    /// An adapter's address was invalidated without its value: read everything again.
    case rereadNeeded

    /// Reads a signal the mirror matched: nothing for anything that says nothing about
    /// adapters or devices (another object's interfaces, another name's owner, a malformed
    /// body); two messages when one object gains or loses both interfaces at once.
    static func read(_ signal: DBusSignal) -> [BlueZMessage] {
        let arguments = signal.arguments
        switch (signal.interface, signal.member) {
        case (BlueZInterface.busDriver, "NameOwnerChanged"):
            // Only the bus itself says who owns a name.
            guard signal.sender == BlueZInterface.busDriver, arguments.count == 3, arguments[0].string == BlueZInterface.service,
                let owner = arguments[2].string
            else { return [] }
            return [owner.isEmpty ? .serviceVanished : .serviceAppeared(owner: owner)]
        case (BlueZInterface.objectManager, "InterfacesAdded"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = objectPath(arguments[0]) else { return [] }
            let objects = BlueZObjects(path: path, interfaces: arguments[1])
            return objects.adapters.map { .adapterAddress(path: $0.key, $0.value) } + objects.devices.map { .deviceAdded(path: $0.key, $0.value) }
        case (BlueZInterface.objectManager, "InterfacesRemoved"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = objectPath(arguments[0]),
                let names = arguments[1].stringList
            else { return [] }
            var messages: [BlueZMessage] = []
            if names.contains(BlueZInterface.device) { messages.append(.deviceRemoved(path: path)) }
            if names.contains(BlueZInterface.adapter) { messages.append(.adapterRemoved(path: path)) }
            return messages
        case (BlueZInterface.properties, "PropertiesChanged"):
            guard arguments.count == 3, let changed = arguments[1].dictionary, let invalidated = arguments[2].stringList,
                signal.path.utf8.count <= BlueZLimits.pathBytes
            else { return [] }
            let path = signal.path
            switch arguments[0].string {
            case BlueZInterface.adapter:
                if let text = changed[BlueZInterface.addressProperty]?.string, let address = BluetoothAddress(text) {
                    return [.adapterAddress(path: path, address)]
                }
                return invalidated.contains(BlueZInterface.addressProperty) ? [.rereadNeeded] : []
            case BlueZInterface.device:
                return [.deviceChanged(path: path, changed: BlueZDeviceProperties(changed), invalidated: invalidated)]
            default:
                return []
            }
        default:
            return []
        }
    }

    /// An object path not longer than `BlueZLimits.pathBytes`.
    private static func objectPath(_ value: DBusValue) -> String? {
        guard let path = value.string, path.utf8.count <= BlueZLimits.pathBytes else { return nil }
        return path
    }
}
