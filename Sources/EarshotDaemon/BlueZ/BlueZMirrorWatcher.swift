import Logging
import RoutingPolicy
import SystemBridge

/// Follows BlueZ on the system bus: reads its adapters and devices from org.bluez, then keeps
/// up with adapters plugged and unplugged, devices appearing, connecting and leaving, and with
/// BlueZ starting and stopping. The thin D-Bus side of `BlueZMirror`, which decides what each
/// signal means and when to hand on this host's addresses and the device list.
///
/// Without a system bus or without BlueZ the daemon uses the config's `host-addresses` only
/// and has no devices; that is said once in the log and is never an error.
final class BlueZMirrorWatcher: Sendable {
    private enum Input: Sendable {
        case signal(DBusSignal)
        case busLost
    }

    /// The one system-bus connection the mirror reads BlueZ on. The Bluetooth drivers make
    /// their calls on it (`ProfileManager1.RegisterProfile`, `Device1.ConnectProfile`) and
    /// export their `Profile1` objects on it, so BlueZ sees one client. Closed by `stop()`.
    let connection: DBusConnection
    private let inputs: AsyncStream<Input>.Continuation
    private let task: Task<Void, Never>

    private init(connection: DBusConnection, inputs: AsyncStream<Input>.Continuation, task: Task<Void, Never>) {
        self.connection = connection
        self.inputs = inputs
        self.task = task
    }

    /// Connects to the system bus and starts following BlueZ; nil when there is no system bus.
    ///
    /// The callbacks run on the watcher's own task (not the bus thread), one at a time, each
    /// awaited before the next, in the order the bus said things:
    /// - `onHostAddresses`: this host's adapters as host addresses, each time they change
    ///   (empty when BlueZ leaves).
    /// - `onDevices`: every device whose address and adapter are known, sorted by object
    ///   path, each time anything in a `BluetoothDeviceInfo` changes (empty when BlueZ leaves).
    ///   Neither is called before there is something to say.
    static func start(
        logger: Logger,
        onHostAddresses: @escaping @Sendable ([HostAddress]) async -> Void,
        onDevices: @escaping @Sendable ([BluetoothDeviceInfo]) async -> Void
    ) async -> BlueZMirrorWatcher? {
        // Handlers run on the bus thread; one stream keeps the signals in the order they came.
        // Unbounded, but only BlueZ's own signals are queued (`BlueZSignalFilter`).
        let (stream, inputs) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        let filter = BlueZSignalFilter()
        let connection: DBusConnection
        do {
            connection = try DBusConnection(.system, onDisconnect: { inputs.yield(.busLost) })
            for rule in BlueZInterface.matchRules {
                try await connection.addMatch(rule) { signal in
                    if filter.admits(signal) { inputs.yield(.signal(signal)) }
                }
            }
        } catch {
            logger.info("no D-Bus system bus (\(error)): this host's Bluetooth addresses are the config's host-addresses only")
            inputs.finish()
            return nil
        }
        let outputs = Outputs(logger: logger, onHostAddresses: onHostAddresses, onDevices: onDevices)
        let task = Task { await follow(stream, on: connection, filter: filter, logger: logger, outputs: outputs) }
        return BlueZMirrorWatcher(connection: connection, inputs: inputs, task: task)
    }

    func stop() async {
        connection.close()  // fails a read in flight, so the task is not left waiting for it
        inputs.finish()
        await task.value
    }

    /// Where a step's results go.
    private struct Outputs: Sendable {
        let logger: Logger
        let onHostAddresses: @Sendable ([HostAddress]) async -> Void
        let onDevices: @Sendable ([BluetoothDeviceInfo]) async -> Void

        func hand(_ step: BlueZMirror.Step) async {
            if step.limitsReached.contains(.adapters) {
                logger.warning("BlueZ lists more than \(BlueZLimits.adapters) Bluetooth adapters: the others are ignored")
            }
            if step.limitsReached.contains(.devices) {
                logger.warning("BlueZ lists more than \(BlueZLimits.devices) Bluetooth devices: the others are ignored")
            }
            if let addresses = step.hostAddresses { await onHostAddresses(addresses) }
            if let devices = step.devices {
                logger.debug("BlueZ devices: \(devices.count) known, connected: \(devices.filter(\.connected).map(\.description))")
                await onDevices(devices)
            }
        }
    }

    private static func follow(
        _ inputs: AsyncStream<Input>, on connection: DBusConnection, filter: BlueZSignalFilter, logger: Logger, outputs: Outputs
    ) async {
        var mirror = BlueZMirror()
        await outputs.hand(await read(&mirror, on: connection, filter: filter, logger: logger, announceAbsence: true))
        for await input in inputs {
            var step: BlueZMirror.Step
            switch input {
            case .busLost:
                logger.warning("lost the D-Bus system bus: this host's Bluetooth addresses are the config's host-addresses only")
                step = mirror.absent()
            case .signal(let signal):
                let hadOwner = mirror.owner != nil
                step = mirror.handle(signal)
                if hadOwner, mirror.owner == nil {
                    logger.info("BlueZ left the system bus: this host's Bluetooth addresses are the config's host-addresses only")
                }
                if step.reread { step = await read(&mirror, on: connection, filter: filter, logger: logger, announceAbsence: false) }
            }
            await outputs.hand(step)
        }
    }

    /// Asks the bus who owns org.bluez, then BlueZ for its adapters and devices.
    private static func read(
        _ mirror: inout BlueZMirror, on connection: DBusConnection, filter: BlueZSignalFilter, logger: Logger, announceAbsence: Bool
    ) async -> BlueZMirror.Step {
        do throws(DBusError) {
            let owner = try await connection.call(
                destination: BlueZInterface.busDriver, path: BlueZInterface.busDriverPath, interface: BlueZInterface.busDriver,
                member: "GetNameOwner", [.string(BlueZInterface.service)], timeout: .seconds(5))
            guard let name = owner.first?.string else { return mirror.absent() }
            // Before GetManagedObjects: the owner's signals from now on are queued, and what
            // it said before is in the reply.
            filter.owner(is: name)
            let objects = try await connection.call(
                destination: name, path: BlueZInterface.objectManagerPath, interface: BlueZInterface.objectManager,
                member: "GetManagedObjects", timeout: .seconds(5))
            logger.info("reading Bluetooth adapters from BlueZ (\(name))")
            return mirror.read(owner: name, managedObjects: objects)
        } catch .remote(name: "org.freedesktop.DBus.Error.NameHasNoOwner", _) {
            if announceAbsence {
                logger.info("BlueZ (org.bluez) is not on the system bus: this host's Bluetooth addresses are the config's host-addresses until it starts")
            }
            return mirror.absent()
        } catch {
            logger.warning("cannot read BlueZ's adapters (\(error)): this host's Bluetooth addresses are the config's host-addresses until BlueZ restarts")
            return mirror.absent()
        }
    }
}
