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

    private init(sessionBus: DBusConnection?, busService: EarshotBusService?, mediaPlayers: MPRISPlayers?, bluez: BlueZMirrorWatcher?) {
        self.sessionBus = sessionBus
        self.busService = busService
        self.mediaPlayers = mediaPlayers
        self.bluez = bluez
    }

    /// Throws `DBusError.nameTaken` when another earshot owns the D-Bus name: like a second
    /// daemon at the control socket, this one must not start (both would route the same audio).
    ///
    /// `onDevices` gets BlueZ's device list each time it changes (see
    /// `BlueZMirrorWatcher.start`), on the watcher's task; by default nobody listens yet.
    static func start(
        daemon: Daemon, options: DaemonOptions, logger: Logger,
        onDevices: @escaping @Sendable ([BluetoothDeviceInfo]) async -> Void = { _ in }
    ) async throws(DBusError) -> DesktopIntegration {
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
        let bluez = await BlueZMirrorWatcher.start(
            logger: logger,
            onHostAddresses: { adapters in await daemon.adapterAddressesChanged(adapters) },
            onDevices: onDevices)
        return DesktopIntegration(sessionBus: sessionBus, busService: busService, mediaPlayers: mediaPlayers, bluez: bluez)
    }

    func stop() async {
        busService?.stop()
        sessionBus?.close()
        await bluez?.stop()
    }
}
