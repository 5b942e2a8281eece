import Logging
import RoutingPolicy
import SystemBridge

/// Follows this host's Bluetooth adapters on the system bus: reads them from org.bluez, then
/// keeps up with adapters plugged and unplugged and with BlueZ starting and stopping, handing
/// each new list of addresses to `onChange`. The thin D-Bus side of `BlueZAdapterTracker`.
///
/// Without a system bus or without BlueZ the daemon uses the config's `host-addresses` only;
/// that is said once in the log and is never an error.
final class BlueZAdapterWatcher: Sendable {
    private enum Input: Sendable {
        case signal(DBusSignal)
        case busLost
    }

    private let connection: DBusConnection
    private let inputs: AsyncStream<Input>.Continuation
    private let task: Task<Void, Never>

    private init(connection: DBusConnection, inputs: AsyncStream<Input>.Continuation, task: Task<Void, Never>) {
        self.connection = connection
        self.inputs = inputs
        self.task = task
    }

    /// Connects to the system bus and starts following BlueZ; nil when there is no system bus.
    static func start(logger: Logger, onChange: @escaping @Sendable ([HostAddress]) async -> Void) async -> BlueZAdapterWatcher? {
        // Handlers run on the bus thread; one stream keeps the signals in the order they came.
        let (stream, inputs) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        let connection: DBusConnection
        do {
            connection = try DBusConnection(.system, onDisconnect: { inputs.yield(.busLost) })
            for rule in BlueZInterface.matchRules {
                try await connection.addMatch(rule) { inputs.yield(.signal($0)) }
            }
        } catch {
            logger.info("no D-Bus system bus (\(error)): this host's Bluetooth addresses are the config's host-addresses only")
            inputs.finish()
            return nil
        }
        let task = Task { await follow(stream, on: connection, logger: logger, onChange: onChange) }
        return BlueZAdapterWatcher(connection: connection, inputs: inputs, task: task)
    }

    func stop() async {
        connection.close()  // fails a read in flight, so the task is not left waiting for it
        inputs.finish()
        await task.value
    }

    private static func follow(
        _ inputs: AsyncStream<Input>, on connection: DBusConnection, logger: Logger,
        onChange: @Sendable ([HostAddress]) async -> Void
    ) async {
        var tracker = BlueZAdapterTracker()
        var step = await read(&tracker, on: connection, logger: logger, announceAbsence: true)
        if case .publish(let addresses) = step { await onChange(addresses) }
        for await input in inputs {
            switch input {
            case .busLost:
                logger.warning("lost the D-Bus system bus: this host's Bluetooth addresses are the config's host-addresses only")
                step = tracker.absent()
            case .signal(let signal):
                let hadOwner = tracker.owner != nil
                step = tracker.handle(signal)
                if hadOwner, tracker.owner == nil {
                    logger.info("BlueZ left the system bus: this host's Bluetooth addresses are the config's host-addresses only")
                }
                if step == .reread { step = await read(&tracker, on: connection, logger: logger, announceAbsence: false) }
            }
            if case .publish(let addresses) = step { await onChange(addresses) }
        }
    }

    /// Asks the bus who owns org.bluez, then BlueZ for its adapters.
    private static func read(_ tracker: inout BlueZAdapterTracker, on connection: DBusConnection, logger: Logger, announceAbsence: Bool) async -> BlueZAdapterTracker.Step {
        do throws(DBusError) {
            let owner = try await connection.call(
                destination: BlueZInterface.busDriver, path: BlueZInterface.busDriverPath, interface: BlueZInterface.busDriver,
                member: "GetNameOwner", [.string(BlueZInterface.service)], timeout: .seconds(5))
            guard let name = owner.first?.string else { return tracker.absent() }
            let objects = try await connection.call(
                destination: name, path: BlueZInterface.objectManagerPath, interface: BlueZInterface.objectManager,
                member: "GetManagedObjects", timeout: .seconds(5))
            logger.info("reading Bluetooth adapters from BlueZ (\(name))")
            return tracker.read(owner: name, managedObjects: objects)
        } catch .remote(name: "org.freedesktop.DBus.Error.NameHasNoOwner", _) {
            if announceAbsence {
                logger.info("BlueZ (org.bluez) is not on the system bus: this host's Bluetooth addresses are the config's host-addresses until it starts")
            }
            return tracker.absent()
        } catch {
            logger.warning("cannot read BlueZ's adapters (\(error)): this host's Bluetooth addresses are the config's host-addresses until BlueZ restarts")
            return tracker.absent()
        }
    }
}
