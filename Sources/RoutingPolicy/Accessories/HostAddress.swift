/// Where the policy learnt one of this host's Bluetooth addresses, so an explanation that
/// names a host address can also say why Earshot believes it is this host's.
public enum HostAddressOrigin: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `host-addresses` in the config.
    case config
    /// Given on the command line (`earshot eval --host-address`).
    case commandLine
    /// A BlueZ adapter, named as BlueZ names it (`hci0`, the last component of its object path).
    case bluez(adapter: String)

    public var description: String {
        switch self {
        case .config: "config"
        case .commandLine: "--host-address"
        case .bluez(let adapter): "bluez \(adapter)"
        }
    }
}

/// One of this host's Bluetooth addresses and everywhere it came from (an adapter's address
/// may also be listed in the config).
public struct HostAddress: Sendable, Hashable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var origins: [HostAddressOrigin]

    public init(_ address: BluetoothAddress, from origins: [HostAddressOrigin]) {
        self.address = address
        self.origins = origins
    }

    /// `11:22:33:44:55:66 (config, bluez hci0)`.
    public var description: String {
        "\(address) (\(origins.map(\.description).joined(separator: ", ")))"
    }

    /// Merges lists in order: the first mention of an address fixes its place, later ones add
    /// their origins.
    public static func merge(_ lists: [HostAddress]...) -> [HostAddress] {
        var merged: [HostAddress] = []
        var index: [BluetoothAddress: Int] = [:]
        for entry in lists.joined() {
            if let at = index[entry.address] {
                for origin in entry.origins where !merged[at].origins.contains(origin) { merged[at].origins.append(origin) }
            } else {
                index[entry.address] = merged.count
                merged.append(entry)
            }
        }
        return merged
    }
}
