import AccessoryDrivers
import RoutingPolicy
import SystemBridge

/// What the daemon knows of each built-in driver's family (`AccessoryFamily.Kind`): the reporter name it registers under, how its channel
/// is opened, and the config switch that turns it off (docs/drivers.md).
extension AccessoryFamily.Kind {
    /// The reporter name: a registration under it gives way to any other reporter's.
    var reporter: String { ReporterName.builtInDriverPrefix + rawValue }

    /// AAP is packets on L2CAP; Samsung's protocol is a byte stream on RFCOMM.
    var channelKind: BluetoothChannel.Kind { self == .aap ? .packets : .stream }

    /// Who else is likely to hold the channel, for the one log line that says so.
    var likelyHolder: String { self == .aap ? "LibrePods or MagicPods" : "GalaxyBudsClient or Gadgetbridge" }

    var productName: String { self == .aap ? "AirPods" : "Galaxy Buds" }

    func isEnabled(in config: DriversConfig) -> Bool {
        switch self {
        case .aap: config.aap
        case .galaxyBuds: config.galaxyBuds
        }
    }
}


