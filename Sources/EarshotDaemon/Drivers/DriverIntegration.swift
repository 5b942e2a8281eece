import Logging
import RoutingPolicy
import SystemBridge

/// The built-in headset drivers in the running daemon: one host, fed with BlueZ's devices by
/// the BlueZ mirror and with `[drivers]` by each config load, speaking to the daemon as a
/// reporter does. Without a system bus (or BlueZ) no device ever connects, and the drivers
/// stay idle; that is said once.
final class DriverIntegration: Sendable {
    let host: AccessoryDriverHost
    /// The drivers' batteries offered to the desktop through BlueZ; nil without a system bus.
    let batteries: BatteryProviderService?

    private init(host: AccessoryDriverHost, batteries: BatteryProviderService?) {
        self.host = host
        self.batteries = batteries
    }

    static func start(
        daemon: Daemon, systemBus: DBusConnection?, options: DaemonOptions, packetLog: (any DriverPacketRecording)?, logger: Logger
    ) async -> DriverIntegration {
        let config = await daemon.driversConfig
        if systemBus == nil, options.bluetoothLoopback == nil {
            logger.info("the built-in headset drivers stay idle: without the system bus there is no BlueZ to say which headsets are connected")
        }
        let transports = LiveDriverTransports(
            loopbackDirectory: options.bluetoothLoopback, profiles: systemBus.map { BlueZProfileBroker(bus: $0, logger: logger) })
        let host = AccessoryDriverHost(
            control: daemon, transports: transports, board: daemon.driverBoard, packetLog: packetLog, config: config, logger: logger)
        var batteries: BatteryProviderService?
        if let systemBus {
            batteries = await BatteryProviderService.start(
                bus: systemBus, board: daemon.driverBoard, enabled: config.batteryToDesktop, logger: logger)
        }
        return DriverIntegration(host: host, batteries: batteries)
    }

    func devicesChanged(_ devices: [DriverDevice]) async {
        await batteries?.devicesChanged(devices)
        await host.devicesChanged(devices)
    }

    func configChanged(_ config: DriversConfig) async {
        await batteries?.configChanged(enabled: config.batteryToDesktop)
        await host.configChanged(config)
    }

    /// Stops every driver; each unregisters the accessory it drove. The battery provider
    /// unregisters from BlueZ first, while the system bus is still open.
    func stop() async {
        await batteries?.stop()
        await host.stop()
    }
}
