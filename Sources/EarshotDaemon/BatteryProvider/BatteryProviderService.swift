import Logging
import RoutingPolicy
import SystemBridge

/// Earshot as BlueZ's battery provider, so the desktop (UPower, the battery menus) shows each
/// headset's battery: the D-Bus side of `BatteryProviderPlan`. It watches the driver board, the
/// device list, the config and BlueZ, exports the ObjectManager at `/org/earshot/battery` on
/// the system bus, registers it with each adapter's `BatteryProviderManager1`, and writes
/// each headset's `desktop-battery` back to the board.
///
/// Changes are applied at most every `updateInterval`: a headset that floods battery packets
/// makes a few PropertiesChanged a second, and the last level always follows (the board's
/// change stream keeps the newest wake-up while a step waits). A registration that fails is
/// said once and tried again only when BlueZ changes owner or an adapter gains the manager;
/// an adapter that goes and comes back is registered again.
actor BatteryProviderService {
    static let updateInterval: Duration = .milliseconds(250)
    static let callTimeout: Duration = .seconds(5)

    private let bus: DBusConnection
    private let board: DriverBoard
    private let logger: Logger
    private let wake: AsyncStream<Void>.Continuation
    private var enabled: Bool
    private var devices: [DriverDevice] = []
    private var view = BlueZBatteryView()
    /// org.bluez's owner once its objects are read (or BlueZ failed to list them): nil while
    /// a read is under way, so no step registers against a view not filled yet.
    private var owner: String?
    private var registrations = BatteryProviderRegistrations()
    /// The children as last announced on the bus.
    private var announced: [String: BatteryProviderPlan.Child] = [:]
    private var toldMissing = false
    private var toldFailure = false
    private var toldReadFailure = false
    private var tasks: [Task<Void, Never>] = []

    private init(bus: DBusConnection, board: DriverBoard, enabled: Bool, logger: Logger, wake: AsyncStream<Void>.Continuation) {
        self.bus = bus
        self.board = board
        self.enabled = enabled
        self.logger = logger
        self.wake = wake
    }

    /// Exports the provider on `bus` and starts following; nil when the bus refuses the export.
    static func start(bus: DBusConnection, board: DriverBoard, enabled: Bool, logger: Logger) async -> BatteryProviderService? {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let service = BatteryProviderService(bus: bus, board: board, enabled: enabled, logger: logger, wake: wake)
        // Only org.bluez's owner's signals are queued, as for the BlueZ mirror.
        let filter = BlueZSignalFilter()
        let (signals, signalInput) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
        do {
            try await bus.exportSubtree(path: BatteryProviderPlan.rootPath) { call in
                Task { await service.answer(call) }
            }
            for rule in BlueZInterface.ownerAndObjectRules {
                try await bus.addMatch(rule) { signal in
                    if filter.admits(signal) { signalInput.yield(signal) }
                }
            }
        } catch {
            logger.warning("cannot offer headsets' batteries to BlueZ (\(error)): the desktop does not show them")
            return nil
        }
        await service.run(wakes: wakes, signals: signals, filter: filter)
        return service
    }

    func devicesChanged(_ devices: [DriverDevice]) {
        self.devices = devices
        wake.yield()
    }

    func configChanged(enabled: Bool) {
        guard enabled != self.enabled else { return }
        self.enabled = enabled
        wake.yield()
    }

    /// A clean exit: BlueZ is told to forget the provider on each adapter (bounded), and the
    /// loops end.
    func stop() async {
        for task in tasks { task.cancel() }
        wake.finish()
        for adapter in registrations.registered {
            _ = try? await bus.call(
                destination: BlueZInterface.service, path: adapter, interface: BatteryInterface.manager, member: BatteryInterface.unregister,
                [.objectPath(BatteryProviderPlan.rootPath)], timeout: .seconds(2))
        }
        registrations.forgetAll()
    }

    private func run(wakes: AsyncStream<Void>, signals: AsyncStream<DBusSignal>, filter: BlueZSignalFilter) async {
        await read(filter: filter)
        let board = board
        let wake = wake
        tasks.append(Task {
            for await _ in board.changes() { wake.yield() }
        })
        tasks.append(Task { [weak self] in
            for await signal in signals { await self?.take(signal, filter: filter) }
        })
        tasks.append(Task { [weak self] in
            for await _ in wakes {
                await self?.step()
                try? await Task.sleep(for: Self.updateInterval)
            }
        })
        wake.yield()
    }

    /// Who owns org.bluez, and what it has: asked at start and after each new owner.
    private func read(filter: BlueZSignalFilter) async {
        owner = nil
        let name: String?
        do throws(DBusError) {
            name = try await bus.call(
                destination: BlueZInterface.busDriver, path: BlueZInterface.busDriverPath, interface: BlueZInterface.busDriver,
                member: "GetNameOwner", [.string(BlueZInterface.service)], timeout: Self.callTimeout
            ).first?.string
        } catch {
            // No BlueZ: nothing to register with until org.bluez gets an owner.
            return view.absent()
        }
        filter.owner(is: name)
        guard let name else { return view.absent() }
        do throws(DBusError) {
            let objects = try await bus.call(
                destination: name, path: BlueZInterface.objectManagerPath, interface: BlueZInterface.objectManager,
                member: "GetManagedObjects", timeout: Self.callTimeout)
            view.read(managedObjects: objects)
        } catch {
            // Its signals fill the view from now on, and registering asks BlueZ itself.
            view.readFailed()
            if !toldReadFailure {
                logger.warning("BlueZ did not list its objects (\(error)): Earshot follows its adapters from its signals from now on")
            }
            toldReadFailure = true
        }
        owner = name
    }

    private func take(_ signal: DBusSignal, filter: BlueZSignalFilter) async {
        switch view.handle(signal) {
        case .nothing:
            return
        case .changed:
            break
        case .managerAppeared(let adapter):
            registrations.managerAppeared(adapter)
        case .managerGone(let adapter):
            registrations.managerGone(adapter)
        case .ownerChanged(let newOwner):
            // A new bluetoothd knows no provider: every adapter is registered again once
            // its objects are read (signals wait in their queue meanwhile).
            registrations.forgetAll()
            owner = nil
            if newOwner != nil { await read(filter: filter) }
        }
        wake.yield()
    }

    private func step() {
        let entries = board.snapshot
        let connected = Dictionary(devices.filter(\.connected).map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        let headsets = entries.compactMap { entry -> BatteryProviderPlan.Headset? in
            guard let device = connected[entry.address] else { return nil }
            return BatteryProviderPlan.Headset(
                address: entry.address, devicePath: device.path, adapterPath: Self.adapterPath(of: device.path),
                percentage: DesktopBatteryLevel.percentage(of: entry.battery))
        }
        var plan = BatteryProviderPlan(
            enabled: enabled, headsets: headsets, registrations: registrations.states, otherProviders: view.devicesWithOtherBattery)
        if owner != nil, !plan.adaptersToRegister.isEmpty {
            // Registering may tell at once that an adapter has no manager: the states say so now.
            for adapter in plan.adaptersToRegister { register(adapter) }
            plan = BatteryProviderPlan(
                enabled: enabled, headsets: headsets, registrations: registrations.states, otherProviders: view.devicesWithOtherBattery)
        }
        announce(plan.children)
        for entry in entries {
            let state = plan.states[entry.address]?.rawValue
            guard entry.desktopBattery != state else { continue }
            board.update(entry.address) { $0.desktopBattery = state }
            logger.debug("desktop battery of \(entry.address): \(state ?? "not known yet")")
        }
    }

    /// Tells BlueZ what changed among the children since the last step.
    private func announce(_ children: [String: BatteryProviderPlan.Child]) {
        let root = BatteryProviderPlan.rootPath
        for (path, child) in announced.sorted(by: { $0.key < $1.key }) where children[path]?.devicePath != child.devicePath {
            bus.emitSignal(path: root, interface: BlueZInterface.objectManager, member: "InterfacesRemoved", BatteryProviderObjects.removed(path))
        }
        for (path, child) in children.sorted(by: { $0.key < $1.key }) {
            switch announced[path] {
            case let old? where old.devicePath == child.devicePath:
                if old.percentage != child.percentage {
                    bus.emitSignal(
                        path: path, interface: BlueZInterface.properties, member: "PropertiesChanged",
                        BatteryProviderObjects.percentageChanged(child.percentage))
                }
            default:
                bus.emitSignal(
                    path: root, interface: BlueZInterface.objectManager, member: "InterfacesAdded", BatteryProviderObjects.added(path, child))
            }
        }
        announced = children
    }

    private func register(_ adapter: String) {
        guard view.managers.contains(adapter) || !view.complete else {
            registrations.unavailable(adapter)
            tellMissing(adapter)
            return
        }
        let attempt = registrations.begin(adapter)
        // Bounded by the call's timeout; not kept, so stop() does not wait for a BlueZ that hangs.
        Task { [bus] in
            let result: Result<[DBusValue], DBusError>
            do throws(DBusError) {
                result = .success(try await bus.call(
                    destination: BlueZInterface.service, path: adapter, interface: BatteryInterface.manager, member: BatteryInterface.register,
                    [.objectPath(BatteryProviderPlan.rootPath)], timeout: Self.callTimeout))
            } catch {
                result = .failure(error)
            }
            self.registered(adapter, result, attempt: attempt)
        }
    }

    private func registered(_ adapter: String, _ result: Result<[DBusValue], DBusError>, attempt: Int) {
        let registration: BatteryProviderPlan.Registration =
            switch result {
            case .success, .failure(.remote(name: "org.bluez.Error.AlreadyExists", _)): .registered
            case .failure: .unavailable
            }
        guard registrations.answered(adapter, attempt: attempt, registration) else { return }
        switch result {
        case .success:
            logger.info("headsets' batteries on \(adapter) go to the desktop: Earshot is BlueZ's battery provider there")
        case .failure(.remote(name: "org.bluez.Error.AlreadyExists", _)):
            break
        case .failure(.remote(let name, _)) where BatteryInterface.absentErrors.contains(name):
            tellMissing(adapter)
        case .failure(let error):
            if !toldFailure {
                logger.warning("BlueZ did not take Earshot's battery provider on \(adapter) (\(error)): the desktop does not show headsets' batteries until BlueZ restarts")
            }
            toldFailure = true
        }
        wake.yield()
    }

    private func tellMissing(_ adapter: String) {
        guard !toldMissing else { return }
        toldMissing = true
        logger.info(
            "BlueZ has no battery provider manager (org.bluez.BatteryProviderManager1) on \(adapter): the desktop cannot show headsets' batteries. BlueZ 5.56 to 5.70 has it only with Experimental = true in /etc/bluetooth/main.conf (or bluetoothd -E); Earshot registers as soon as it appears")
    }

    private func answer(_ call: DBusMethodCall) {
        switch BatteryProviderObjects.answer(
            path: call.path, interface: call.interface, member: call.member, arguments: call.arguments, children: announced)
        {
        case .values(let values): call.reply(values)
        case .error(let name, let message): call.reply.fail(name: name, message: message)
        }
    }

    /// BlueZ's device paths are their adapter's path and `dev_…`.
    static func adapterPath(of devicePath: String) -> String {
        guard let slash = devicePath.lastIndex(of: "/"), slash != devicePath.startIndex else { return devicePath }
        return String(devicePath[..<slash])
    }
}
