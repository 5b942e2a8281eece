import RoutingPolicy

/// Which batteries Earshot offers BlueZ, on which adapters it must be registered, and what
/// each headset's `desktop-battery` says, from what the drivers read and what BlueZ said.
/// Pure: `BatteryProviderService` gathers the inputs and applies the result.
struct BatteryProviderPlan: Equatable {
    /// A driven headset that BlueZ lists as connected.
    struct Headset: Equatable {
        var address: BluetoothAddress
        /// Its `Device1` path, `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
        var devicePath: String
        var adapterPath: String
        /// `DesktopBatteryLevel.percentage`; nil while the driver has no level.
        var percentage: UInt8?
    }

    /// Where Earshot stands with an adapter's `BatteryProviderManager1`.
    enum Registration: Equatable {
        /// RegisterBatteryProvider is in flight.
        case pending
        case registered
        /// The adapter has no manager, BlueZ refused, or did not answer in time: tried again
        /// only when something changes that could help (BlueZ restarts, the manager appears).
        case unavailable
    }

    /// One `org.bluez.BatteryProvider1` child to export.
    struct Child: Equatable {
        var devicePath: String
        var percentage: UInt8
    }

    /// Child object path → what it says.
    var children: [String: Child] = [:]
    /// Adapters with children and no registration tried yet.
    var adaptersToRegister: [String] = []
    /// Each headset's state; none while not known yet (no level, registration in flight).
    var states: [BluetoothAddress: DesktopBatteryState] = [:]

    init(
        enabled: Bool, headsets: [Headset], registrations: [String: Registration], otherProviders devicesWithOtherBattery: Set<String>
    ) {
        var adapters: Set<String> = []
        for headset in headsets {
            guard enabled else {
                states[headset.address] = .off
                continue
            }
            // BlueZ keeps the first battery of a device: another's stays, and a child of ours
            // would only be ignored. Once it leaves, the child appears and BlueZ takes it.
            if devicesWithOtherBattery.contains(headset.devicePath) {
                states[headset.address] = .providedByOther
                continue
            }
            guard let percentage = headset.percentage else { continue }
            children[Self.childPath(for: headset.address)] = Child(devicePath: headset.devicePath, percentage: percentage)
            adapters.insert(headset.adapterPath)
            switch registrations[headset.adapterPath] {
            case .registered: states[headset.address] = .provided
            case .unavailable: states[headset.address] = .noProviderManager
            case .pending, nil: break
            }
        }
        adaptersToRegister = adapters.filter { registrations[$0] == nil }.sorted()
    }

    static let rootPath = "/org/earshot/battery"

    /// `/org/earshot/battery/dev_AA_BB_CC_DD_EE_FF`, as BlueZ names device objects.
    static func childPath(for address: BluetoothAddress) -> String {
        rootPath + "/dev_" + address.description.replacing(":", with: "_")
    }
}
