/// The names of BlueZ's battery API (BlueZ doc/org.bluez.BatteryProviderManager.rst,
/// org.bluez.BatteryProvider.rst, org.bluez.Battery.rst). Constants only.
enum BatteryInterface {
    /// On each adapter, `/org/bluez/hciN`: `RegisterBatteryProvider(o provider)`,
    /// `UnregisterBatteryProvider(o provider)`.
    static let manager = "org.bluez.BatteryProviderManager1"
    static let register = "RegisterBatteryProvider"
    static let unregister = "UnregisterBatteryProvider"
    /// What a provider's objects carry: `Percentage` (y), `Device` (o), `Source` (s).
    static let provider = "org.bluez.BatteryProvider1"
    /// What BlueZ then shows on the device path: `Percentage` (y), `Source` (s, optional).
    static let battery = "org.bluez.Battery1"
    static let percentage = "Percentage"
    static let device = "Device"
    static let source = "Source"

    /// What BlueZ answers when the adapter has no manager (BlueZ before 5.71 without the
    /// experimental switch): the interface is not there at all.
    static let absentErrors: Set<String> = [
        "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
        "org.freedesktop.DBus.Error.UnknownObject",
    ]
}
