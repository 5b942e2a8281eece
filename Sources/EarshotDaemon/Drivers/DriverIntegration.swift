import Logging
import RoutingPolicy
import SystemBridge

/// The built-in headset drivers in the running daemon: one host, fed with BlueZ's devices by
/// the BlueZ mirror and with `[drivers]` by each config load, speaking to the daemon as a
/// reporter does. Without a system bus (or BlueZ) no device ever connects, and the drivers
/// stay idle; that is said once.
final class DriverIntegration: Sendable {
    let host: AccessoryDriverHost

    private init(host: AccessoryDriverHost) {
        self.host = host
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
        return DriverIntegration(host: host)
    }

    func devicesChanged(_ devices: [DriverDevice]) async {
        await host.devicesChanged(devices)
    }

    func configChanged(_ config: DriversConfig) async {
        await host.configChanged(config)
    }

    /// Stops every driver; each unregisters the accessory it drove.
    func stop() async {
        await host.stop()
    }
}
