import RoutingPolicy
import SystemBridge

/// This host's Bluetooth adapters as BlueZ has told us so far, and what to do after each thing
/// the bus says. Pure: the watcher does the talking, this decides.
///
/// Signals count only when they come from the connection that owns org.bluez now, so another
/// program on the system bus cannot pose as BlueZ; until BlueZ's owner is known (or after it
/// left) there are no adapters.
struct BlueZAdapterTracker {
    enum Step: Equatable {
        case nothing
        /// The adapters' addresses changed: hand these to the policy.
        case publish([HostAddress])
        /// Read the owner and all adapters again (`GetNameOwner`, `GetManagedObjects`).
        case reread
    }

    /// The unique bus name that owns org.bluez; nil while BlueZ is not running.
    private(set) var owner: String?
    /// Adapter object path → address.
    private(set) var adapters: [String: BluetoothAddress] = [:]
    private var published: [HostAddress] = []

    /// The adapters as host addresses, ordered by object path (hci0 before hci1).
    var hostAddresses: [HostAddress] {
        adapters.sorted { $0.key < $1.key }.map { path, address in
            HostAddress(address, from: [.bluez(adapter: String(path.split(separator: "/").last ?? Substring(path)))])
        }
    }

    /// A fresh read: `owner` owns org.bluez and `GetManagedObjects` answered `body`.
    mutating func read(owner: String, managedObjects body: [DBusValue]) -> Step {
        self.owner = owner
        adapters = BlueZMessage.adapters(inManagedObjects: body) ?? [:]
        return publishIfChanged()
    }

    /// BlueZ is not on the bus (or could not be asked): no adapters.
    mutating func absent() -> Step {
        owner = nil
        adapters = [:]
        return publishIfChanged()
    }

    mutating func handle(_ signal: DBusSignal) -> Step {
        guard let message = BlueZMessage.read(signal) else { return .nothing }
        switch message {
        case .serviceVanished:
            return absent()
        case .serviceAppeared(let newOwner):
            // Keep the old adapters until the new owner's are read: a bluetoothd restart lists
            // the same ones, and dropping them in between would move the output twice.
            owner = newOwner
            return .reread
        case .adapterAddress, .adapterRemoved, .rereadNeeded:
            guard let owner, signal.sender == owner else { return .nothing }
            switch message {
            case .adapterAddress(let path, let address): adapters[path] = address
            case .adapterRemoved(let path): adapters[path] = nil
            default: return .reread
            }
            return publishIfChanged()
        }
    }

    private mutating func publishIfChanged() -> Step {
        let current = hostAddresses
        guard current != published else { return .nothing }
        published = current
        return .publish(current)
    }
}
