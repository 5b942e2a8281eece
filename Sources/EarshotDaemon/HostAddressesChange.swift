import RoutingPolicy

/// This host's Bluetooth addresses in use after a change of the set or of where one came from:
/// BlueZ listed other adapters, or a config reload changed `host-addresses`.
public struct HostAddressesChange: Sendable, Hashable {
    /// Wall-clock time, milliseconds since the Unix epoch.
    public var at: Int64
    /// Every address in use now with its origins, in the order `status` lists them.
    public var addresses: [HostAddress]
    /// Addresses in use now that were not before, and those no longer in use. Both are empty
    /// when only the origins changed (an adapter's address also put in the config).
    public var added: [BluetoothAddress]
    public var removed: [BluetoothAddress]

    public init(at: Int64, addresses: [HostAddress], added: [BluetoothAddress], removed: [BluetoothAddress]) {
        self.at = at
        self.addresses = addresses
        self.added = added
        self.removed = removed
    }

    /// The change from `before` to `after`, or nil when the addresses and their origins are the same.
    public init?(at: Int64, from before: [HostAddress], to after: [HostAddress]) {
        guard before != after else { return nil }
        let old = Set(before.map(\.address)), new = Set(after.map(\.address))
        self.init(
            at: at, addresses: after, added: after.map(\.address).filter { !old.contains($0) },
            removed: before.map(\.address).filter { !new.contains($0) })
    }
}
