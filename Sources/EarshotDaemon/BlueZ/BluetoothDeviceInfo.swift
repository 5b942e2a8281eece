import RoutingPolicy

/// One remote Bluetooth device as BlueZ lists it now (an `org.bluez.Device1` object): what a
/// driver needs to tell whether the device is its kind and whether it is connected.
public struct BluetoothDeviceInfo: Sendable, Hashable, CustomStringConvertible {
    /// The Device1 object path, e.g. `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public var path: String
    public var address: BluetoothAddress
    /// The name the device gives itself; nil when BlueZ has none (yet).
    public var name: String?
    /// The name to show: the user's, else BlueZ's fallback (the name or the address); nil when
    /// BlueZ has not said.
    public var alias: String?
    public var connected: Bool
    /// BlueZ has read the device's services, so `uuids` is complete (it grows until then).
    public var servicesResolved: Bool
    /// The service UUIDs in their 128-bit form, lowercased, sorted, each once.
    public var uuids: [String]
    /// The Device ID record as `bluetooth:vXXXXpXXXXdXXXX` (or `usb:…`); nil when the device
    /// has none.
    public var modalias: String?
    /// The adapter it is known to, e.g. `/org/bluez/hci0`.
    public var adapterPath: String

    public init(
        path: String, address: BluetoothAddress, name: String? = nil, alias: String? = nil, connected: Bool = false,
        servicesResolved: Bool = false, uuids: [String] = [], modalias: String? = nil, adapterPath: String
    ) {
        self.path = path
        self.address = address
        self.name = name
        self.alias = alias
        self.connected = connected
        self.servicesResolved = servicesResolved
        self.uuids = uuids
        self.modalias = modalias
        self.adapterPath = adapterPath
    }

    public var description: String {
        "\(address) \(alias ?? name ?? "(unnamed)")\(connected ? " connected" : "")"
    }
}
