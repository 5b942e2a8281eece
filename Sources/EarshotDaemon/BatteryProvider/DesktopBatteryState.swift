/// Whether a headset's battery reaches the desktop (BlueZ's `org.bluez.Battery1`, which UPower
/// and the desktops' battery menus read): the `desktop-battery` field of each driver entry.
enum DesktopBatteryState: String, Sendable, Hashable {
    /// Earshot is the device's battery provider in BlueZ.
    case provided
    /// BlueZ has no `BatteryProviderManager1` on the headset's adapter (BlueZ before 5.71
    /// without `Experimental = true`), or it refused or never answered the registration.
    case noProviderManager = "no-provider-manager"
    /// BlueZ already shows a battery for the device from someone else (PipeWire over
    /// hands-free, BlueZ's own battery service): BlueZ keeps the first, Earshot leaves it.
    case providedByOther = "provided-by-other"
    /// `[drivers] battery-to-desktop = false`.
    case off
}
