import RoutingPolicy

/// A Bluetooth device as the driver host needs it: what BlueZ's `Device1` object says (the
/// BlueZ mirror's view, reduced to what identifies a family and whether it is connected).
public struct DriverDevice: Sendable, Hashable {
    /// The `Device1` object path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
    public var path: String
    public var address: BluetoothAddress
    public var name: String?
    public var connected: Bool
    /// Service UUIDs, lowercased; complete once BlueZ resolved the services.
    public var uuids: [String]
    public var modalias: String?

    public init(path: String, address: BluetoothAddress, name: String?, connected: Bool, uuids: [String], modalias: String?) {
        self.path = path
        self.address = address
        self.name = name
        self.connected = connected
        self.uuids = uuids
        self.modalias = modalias
    }
}

extension DriverDevice {
    /// What the BlueZ mirror knows of a `Device1`.
    init(_ info: BluetoothDeviceInfo) {
        self.init(path: info.path, address: info.address, name: info.alias ?? info.name, connected: info.connected, uuids: info.uuids, modalias: info.modalias)
    }
}
