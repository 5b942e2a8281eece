import Logging
import SystemBridge

/// The daemon's place on the desktop's buses: the session bus (Earshot's D-Bus service, MPRIS
/// players) and the system bus (BlueZ adapters). Each part is optional: without a bus the
/// daemon still routes, and says why once in the log.
final class DesktopIntegration: Sendable {
    /// The session bus, shared by the D-Bus service and the MPRIS controller; nil when none.
    let sessionBus: DBusConnection?

    private init(sessionBus: DBusConnection?) {
        self.sessionBus = sessionBus
    }

    static func start(daemon: Daemon, options: DaemonOptions, logger: Logger) async -> DesktopIntegration {
        var sessionBus: DBusConnection?
        do {
            sessionBus = try DBusConnection(.session)
        } catch {
            logger.warning("no D-Bus session bus (\(error)): the D-Bus service and MPRIS pause/resume are off")
        }
        return DesktopIntegration(sessionBus: sessionBus)
    }

    func stop() async {
        sessionBus?.close()
    }
}
