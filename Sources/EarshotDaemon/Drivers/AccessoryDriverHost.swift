import AccessoryDrivers
import Logging
import RoutingPolicy

/// Starts a driver for each connected device of a known family and stops it when the device
/// disconnects, the family is turned off, or the address is in `drivers.ignore`. Fed by the
/// BlueZ mirror (device lists) and the config; each driver speaks to the daemon through
/// `DaemonControl` like any reporter.
actor AccessoryDriverHost {
    /// At most this many devices are driven at once (a hostile bus cannot start thousands).
    static let maximumDrivers = 16

    private let control: any DaemonControl
    private let transports: any DriverTransports
    private let board: DriverBoard
    private let packetLog: (any DriverPacketRecording)?
    private let logger: Logger
    private var config: DriversConfig
    private var devices: [DriverDevice] = []
    private var drivers: [BluetoothAddress: (driver: DeviceDriver, family: AccessoryFamily)] = [:]
    /// Drivers told to stop that may still be finishing (a connect in flight), by address: a
    /// new driver for the address starts after its predecessor ended.
    private var retiring: [BluetoothAddress: DeviceDriver] = [:]
    private var toldCap = false

    init(
        control: any DaemonControl, transports: any DriverTransports, board: DriverBoard, packetLog: (any DriverPacketRecording)?,
        config: DriversConfig, logger: Logger
    ) {
        self.control = control
        self.transports = transports
        self.board = board
        self.packetLog = packetLog
        self.config = config
        self.logger = logger
    }

    func devicesChanged(_ devices: [DriverDevice]) async {
        self.devices = devices
        await reconcile()
    }

    func configChanged(_ config: DriversConfig) async {
        guard config != self.config else { return }
        let ruleChanged = config.inEar != self.config.inEar
        self.config = config
        // A new in-ear rule applies from the next connection: the drivers start over, keeping
        // their registrations (the accessories did not go), each after its predecessor ended.
        if ruleChanged {
            for (address, running) in drivers {
                running.driver.retire(unregister: false)
                retiring[address] = running.driver
            }
            drivers = [:]
        }
        await reconcile()
    }

    /// The daemon stops: every driver stops, keeping its registration (a restart must not
    /// move audio; each registers again when its device connects).
    func stop() async {
        devices = []
        await stopAll(unregister: false)
    }

    /// Which devices should have a driver now, and with which family.
    func wanted() -> [BluetoothAddress: (DriverDevice, AccessoryFamily)] {
        var wanted: [BluetoothAddress: (DriverDevice, AccessoryFamily)] = [:]
        for device in devices where device.connected && !config.ignore.contains(device.address) {
            guard let family = AccessoryFamily.identify(modalias: device.modalias, uuids: device.uuids, name: device.name),
                family.kind.isEnabled(in: config)
            else { continue }
            wanted[device.address] = (device, family)
        }
        return wanted
    }

    /// The running driver of `address`, if any (tests wait on it).
    func driver(for address: BluetoothAddress) -> DeviceDriver? { drivers[address]?.driver }

    private func reconcile() async {
        let wanted = wanted()
        retiring = retiring.filter { !$0.value.isFinished }
        for (address, running) in drivers where wanted[address].map({ $0.1 != running.family || $0.0.path != running.driver.device.path }) ?? true {
            drivers[address] = nil
            running.driver.retire()
            retiring[address] = running.driver
            board.end(address)
        }
        let context = DeviceDriver.Context(
            control: control, transports: transports, board: board, packetLog: packetLog, rule: config.inEar, logger: logger)
        for (address, (device, family)) in wanted.sorted(by: { $0.key < $1.key }) where drivers[address] == nil {
            guard drivers.count < Self.maximumDrivers else {
                if !toldCap { logger.warning("more than \(Self.maximumDrivers) headsets to drive: the rest are left alone") }
                toldCap = true
                break
            }
            logger.info("\(family.kind.productName) \(address) (\(device.name ?? "unnamed")) connected: the \(family.kind.rawValue) driver reads whether it is worn")
            drivers[address] = (DeviceDriver(device: device, family: family, context: context, after: retiring.removeValue(forKey: address)), family)
        }
    }

    private func stopAll(unregister: Bool = true) async {
        let running = drivers
        drivers = [:]
        for (address, (driver, _)) in running {
            await driver.stop(unregister: unregister)
            board.end(address)
        }
        let finishing = retiring.values
        retiring = [:]
        for driver in finishing { await driver.finished() }
    }
}
