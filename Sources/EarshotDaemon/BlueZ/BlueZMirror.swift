import RoutingPolicy
import SystemBridge

/// BlueZ's adapters and devices as BlueZ has told us so far, and what to do after each thing
/// the bus says. Pure: the watcher does the talking, this decides. This host's addresses (for
/// the source-identifier rule) and the devices (for the Bluetooth drivers) are two views of it.
///
/// Signals count only when they come from the connection that owns org.bluez now, so another
/// program on the system bus cannot pose as BlueZ; until BlueZ's owner is known (or after it
/// left) there are no adapters and no devices. What is kept is bounded by `BlueZLimits`.
struct BlueZMirror {
    /// What the watcher does next; several parts can be set at once (an adapter unplugged
    /// changes the host addresses and takes its devices along).
    struct Step: Equatable {
        /// The adapters' addresses changed: hand these to the policy.
        var hostAddresses: [HostAddress]?
        /// Something a consumer could care about changed in the devices: here are all of them.
        var devices: [BluetoothDeviceInfo]?
        /// Read the owner and all objects again (`GetNameOwner`, `GetManagedObjects`).
        var reread = false
        /// Limits reached for the first time in this mirror's life: say so once in the log.
        var limitsReached: Set<Limit> = []

        static let nothing = Step()
        static let reread = Step(reread: true)
    }

    enum Limit: Hashable, Sendable {
        /// More adapters than `BlueZLimits.adapters`: the rest are ignored.
        case adapters
        /// More devices than `BlueZLimits.devices`: the rest are ignored until a re-read.
        case devices
    }

    /// The unique bus name that owns org.bluez; nil while BlueZ is not running.
    private(set) var owner: String?
    /// Adapter object path → address.
    private(set) var adapters: [String: BluetoothAddress] = [:]
    /// Device object path → its properties as far as known.
    private(set) var devices: [String: BlueZDeviceProperties] = [:]
    private var publishedHostAddresses: [HostAddress] = []
    private var publishedDevices: [BluetoothDeviceInfo] = []
    private var limitsReported: Set<Limit> = []

    /// The adapters as host addresses, ordered by object path (hci0 before hci1).
    var hostAddresses: [HostAddress] {
        adapters.sorted { $0.key < $1.key }.map { path, address in
            HostAddress(address, from: [.bluez(adapter: String(path.split(separator: "/").last ?? Substring(path)))])
        }
    }

    /// The devices whose address and adapter are known, ordered by object path.
    var deviceList: [BluetoothDeviceInfo] {
        devices.sorted { $0.key < $1.key }.compactMap { path, properties in properties.info(path: path) }
    }

    /// A fresh read: `owner` owns org.bluez and `GetManagedObjects` answered `body`.
    mutating func read(owner: String, managedObjects body: [DBusValue]) -> Step {
        self.owner = owner
        let objects = BlueZObjects(managedObjects: body) ?? BlueZObjects()
        adapters = [:]
        devices = [:]
        var reached: Set<Limit> = []
        // By path, so which objects a limit leaves out does not depend on the reply's order.
        for (path, address) in objects.adapters.sorted(by: { $0.key < $1.key }) { addAdapter(path, address, &reached) }
        for (path, device) in objects.devices.sorted(by: { $0.key < $1.key }) { addDevice(path, device, &reached) }
        return publishIfChanged(reached)
    }

    /// BlueZ is not on the bus (or could not be asked): no adapters, no devices.
    mutating func absent() -> Step {
        owner = nil
        adapters = [:]
        devices = [:]
        return publishIfChanged([])
    }

    mutating func handle(_ signal: DBusSignal) -> Step {
        var reached: Set<Limit> = []
        for message in BlueZMessage.read(signal) {
            switch message {
            case .serviceVanished:
                return absent()
            case .serviceAppeared(let newOwner):
                // Keep the old objects until the new owner's are read: a bluetoothd restart
                // lists the same ones, and dropping them in between would move the output
                // twice and stop drivers for nothing.
                owner = newOwner
                return .reread
            default:
                guard let owner, signal.sender == owner else { return .nothing }
                if message == .rereadNeeded { return .reread }
                apply(message, &reached)
            }
        }
        return publishIfChanged(reached)
    }

    private mutating func apply(_ message: BlueZMessage, _ reached: inout Set<Limit>) {
        switch message {
        case .adapterAddress(let path, let address):
            addAdapter(path, address, &reached)
        case .adapterRemoved(let path):
            adapters[path] = nil
            // BlueZ removes an adapter's devices first; should it not, they go with it.
            devices = devices.filter { devicePath, device in
                device.adapterPath != path && !devicePath.hasPrefix(path + "/")
            }
        case .deviceAdded(let path, let device):
            addDevice(path, device, &reached)
        case .deviceChanged(let path, let changed, let invalidated):
            // A device not tracked (left out by the limit) stays unknown until a re-read.
            guard var device = devices[path] else { return }
            device.forget(invalidated)
            device.merge(changed)
            devices[path] = device
        case .deviceRemoved(let path):
            devices[path] = nil
        case .serviceAppeared, .serviceVanished, .rereadNeeded:
            break
        }
    }

    private mutating func addAdapter(_ path: String, _ address: BluetoothAddress, _ reached: inout Set<Limit>) {
        guard adapters[path] != nil || adapters.count < BlueZLimits.adapters else {
            reached.insert(.adapters)
            return
        }
        adapters[path] = address
    }

    private mutating func addDevice(_ path: String, _ device: BlueZDeviceProperties, _ reached: inout Set<Limit>) {
        guard devices[path] != nil || devices.count < BlueZLimits.devices else {
            reached.insert(.devices)
            return
        }
        devices[path] = device
    }

    private mutating func publishIfChanged(_ reached: Set<Limit>) -> Step {
        var step = Step.nothing
        let addresses = hostAddresses
        if addresses != publishedHostAddresses {
            publishedHostAddresses = addresses
            step.hostAddresses = addresses
        }
        let list = deviceList
        if list != publishedDevices {
            publishedDevices = list
            step.devices = list
        }
        step.limitsReached = reached.subtracting(limitsReported)
        limitsReported.formUnion(reached)
        return step
    }
}
