import SystemBridge

/// What BlueZ says that matters to the battery provider: which adapters have a
/// `BatteryProviderManager1`, and which devices show an `org.bluez.Battery1` and from whom.
/// Pure: read from a `GetManagedObjects` reply and the signals of org.bluez's owner (the
/// service admits only those, as `BlueZSignalFilter` does for the mirror). Bounded by
/// `BlueZLimits`.
struct BlueZBatteryView: Equatable {
    /// The `Source` Earshot's batteries carry, which tells them from another provider's.
    static let ownSource = "Earshot"

    enum Change: Equatable {
        case nothing
        /// Something in the view changed.
        case changed
        /// An adapter gained `BatteryProviderManager1` (BlueZ started with it, or the adapter
        /// was plugged in): registering there may now work.
        case managerAppeared(adapterPath: String)
        /// An adapter, or its `BatteryProviderManager1`, was removed: BlueZ dropped the
        /// registration there with it.
        case managerGone(adapterPath: String)
        /// org.bluez has a new owner, or none: BlueZ forgot every registration.
        case ownerChanged(String?)
    }

    /// Adapters with a `BatteryProviderManager1`.
    private(set) var managers: Set<String> = []
    /// Device path → its Battery1's `Source` (empty when it has none).
    private(set) var batterySources: [String: String] = [:]
    /// False after BlueZ did not list its objects: the signals since fill the view, and an
    /// adapter missing from `managers` may have one all the same.
    private(set) var complete = true

    /// Devices whose battery on the desktop comes from someone else.
    var devicesWithOtherBattery: Set<String> {
        Set(batterySources.filter { $0.value != Self.ownSource }.keys)
    }

    /// A fresh read of BlueZ's objects (`a{oa{sa{sv}}}`).
    mutating func read(managedObjects body: [DBusValue]) {
        absent()
        for (path, interfaces) in body.first?.dictionary ?? [:] { add(path: path, interfaces: interfaces) }
    }

    /// BlueZ is not on the bus.
    mutating func absent() {
        managers = []
        batterySources = [:]
        complete = true
    }

    /// BlueZ is there but did not answer `GetManagedObjects`.
    mutating func readFailed() {
        absent()
        complete = false
    }

    mutating func handle(_ signal: DBusSignal) -> Change {
        let arguments = signal.arguments
        switch (signal.interface, signal.member) {
        case (BlueZInterface.busDriver, "NameOwnerChanged"):
            guard signal.sender == BlueZInterface.busDriver, arguments.count == 3, arguments[0].string == BlueZInterface.service,
                let owner = arguments[2].string
            else { return .nothing }
            absent()
            return .ownerChanged(owner.isEmpty ? nil : owner)
        case (BlueZInterface.objectManager, "InterfacesAdded"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = arguments[0].string else { return .nothing }
            let before = self
            let gainedManager = add(path: path, interfaces: arguments[1])
            if gainedManager { return .managerAppeared(adapterPath: path) }
            return before == self ? .nothing : .changed
        case (BlueZInterface.objectManager, "InterfacesRemoved"):
            guard signal.path == BlueZInterface.objectManagerPath, arguments.count == 2, let path = arguments[0].string,
                let names = arguments[1].stringList
            else { return .nothing }
            let before = self
            if names.contains(BatteryInterface.battery) || names.contains(BlueZInterface.device) { batterySources[path] = nil }
            // Said even for a manager the view did not know (bounded, or not read): Earshot
            // may be registered there all the same.
            if names.contains(BatteryInterface.manager) || names.contains(BlueZInterface.adapter) {
                managers.remove(path)
                return .managerGone(adapterPath: path)
            }
            return before == self ? .nothing : .changed
        default:
            return .nothing
        }
    }

    /// One object's interfaces (`a{sa{sv}}`); true when it brought a manager not known before.
    @discardableResult
    private mutating func add(path: String, interfaces: DBusValue) -> Bool {
        guard path.utf8.count <= BlueZLimits.pathBytes, let interfaces = interfaces.dictionary else { return false }
        var gained = false
        if interfaces[BatteryInterface.manager] != nil, managers.count < BlueZLimits.adapters {
            gained = managers.insert(path).inserted
        }
        if let battery = interfaces[BatteryInterface.battery]?.dictionary,
            batterySources[path] != nil || batterySources.count < BlueZLimits.devices
        {
            batterySources[path] = battery[BatteryInterface.source]?.string.map { String($0.prefix(64)) } ?? ""
        }
        return gained
    }
}
