import AccessoryDrivers
import RoutingPolicy
import SystemBridge

/// What the daemon knows of each built-in driver's family (`AccessoryFamily.Kind`): the reporter name it registers under, how its channel
/// is opened, and the config switch that turns it off (docs/drivers.md).
extension AccessoryFamily.Kind {
    /// The reporter name: a registration under it gives way to any other reporter's.
    var reporter: String { ReporterName.builtInDriverPrefix + rawValue }

    /// AAP is packets on L2CAP; Samsung's and Sony's protocols are byte streams on RFCOMM.
    var channelKind: BluetoothChannel.Kind { self == .aap ? .packets : .stream }

    /// Who else is likely to hold the channel, for the one log line that says so.
    var likelyHolder: String {
        switch self {
        case .aap: "LibrePods or MagicPods"
        case .galaxyBuds: "GalaxyBudsClient or Gadgetbridge"
        case .sony: "SonyHeadphonesClient, Gadgetbridge or omarchy-headphones"
        }
    }

    var productName: String {
        switch self {
        case .aap: "AirPods"
        case .galaxyBuds: "Galaxy Buds"
        case .sony: "Sony"
        }
    }

    func isEnabled(in config: DriversConfig) -> Bool {
        switch self {
        case .aap: config.aap
        case .galaxyBuds: config.galaxyBuds
        case .sony: config.sony
        }
    }
}
