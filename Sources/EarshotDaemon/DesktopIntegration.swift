import Logging
import SystemBridge

/// The daemon's place on the desktop's buses: the session bus (Earshot's D-Bus service, MPRIS
/// players) and the system bus (BlueZ's adapters and devices). Each part is optional: without a
/// bus the daemon still routes, and says why once in the log.
final class DesktopIntegration: Sendable {
    /// The session bus, shared by the D-Bus service and the MPRIS controller; nil when none.
    let sessionBus: DBusConnection?
    /// org.earshot.Earshot1 on the session bus; nil without one.
    let busService: EarshotBusService?
    /// MPRIS pause/resume's players; nil without a session bus.
    let mediaPlayers: MPRISPlayers?
    /// BlueZ's adapters and devices, on the one system-bus connection (`bluez.connection`,
    /// for the Bluetooth drivers' calls too); nil without a system bus.
    let bluez: BlueZMirrorWatcher?
    /// The built-in headset drivers, fed with BlueZ's devices.
    let drivers: DriverIntegration
    private let driverFeed: Task<Void, Never>

    private init(
        sessionBus: DBusConnection?, busService: EarshotBusService?, mediaPlayers: MPRISPlayers?, bluez: BlueZMirrorWatcher?,
        drivers: DriverIntegration, driverFeed: Task<Void, Never>
    ) {
        self.drivers = drivers
        self.driverFeed = driverFeed
        self.sessionBus = sessionBus
        self.busService = busService
        self.mediaPlayers = mediaPlayers
        self.bluez = bluez
    }

    /// Throws `DBusError.nameTaken` when another earshot owns the D-Bus name: like a second
    /// daemon at the control socket, this one must not start (both would route the same audio).
    static func start(daemon: Daemon, options: DaemonOptions, logger: Logger) async throws(DBusError) -> DesktopIntegration {
        var sessionBus: DBusConnection?
        do {
            sessionBus = try DBusConnection(.session)
        } catch {
            logger.warning("no D-Bus session bus (\(error)): the D-Bus service and MPRIS pause/resume are off")
        }
        let busService: EarshotBusService?
        do { busService = try await EarshotBusService.serve(on: sessionBus, control: daemon, logger: logger) } catch {
            sessionBus?.close()
            throw error
        }
        var mediaPlayers: MPRISPlayers?
        if let sessionBus { mediaPlayers = await MPRISPlayers.start(on: sessionBus, for: daemon, logger: logger) }
        // Only the newest device list matters: a driver host busy starting a driver skips the
        // lists that came meanwhile.
        let (devices, deviceInput) = AsyncStream.makeStream(of: [BluetoothDeviceInfo].self, bufferingPolicy: .bufferingNewest(1))
        let bluez = await BlueZMirrorWatcher.start(
            logger: logger,
            onHostAddresses: { adapters in await daemon.adapterAddressesChanged(adapters) },
            onDevices: { deviceInput.yield($0) })
        let packetLog = options.driverPacketLog.map { path in
            DriverPacketLog(path: path, problem: { logger.warning("driver \($0)") }, resumed: { logger.notice("driver \($0)") })
        }
        if let packetLog { logger.info("logging every headset driver packet to \(packetLog.path) (rotated at \(DriverPacketLog.defaultCap >> 20) MiB)") }
        let drivers = await DriverIntegration.start(
            daemon: daemon, systemBus: bluez?.connection, options: options, packetLog: packetLog, logger: logger)
        let driverFeed = Task {
            for await list in devices { await drivers.devicesChanged(list.map(DriverDevice.init)) }
        }
        return DesktopIntegration(
            sessionBus: sessionBus, busService: busService, mediaPlayers: mediaPlayers, bluez: bluez, drivers: drivers, driverFeed: driverFeed)
    }

    /// The drivers stop first, keeping their registrations (a restart must not move audio; each
    /// driver registers again when its device connects), then the buses close.
    func stop() async {
        driverFeed.cancel()
        await drivers.stop()
        busService?.stop()
        sessionBus?.close()
        await bluez?.stop()
    }
}
