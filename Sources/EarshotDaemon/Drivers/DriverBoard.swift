import AccessoryDrivers
import FoundationEssentials
import RoutingPolicy
import Synchronization

/// What each running driver is doing, for `earshot status` and `accessory show`. Written by
/// the drivers (any thread), read by status requests; bounded by the number of drivers.
public final class DriverBoard: Sendable {
    /// One driven device.
    public struct Entry: Sendable, Hashable {
        public enum Connection: String, Sendable, Hashable {
            case connecting, connected
            /// Another program holds the channel; retried with backoff.
            case held
            /// The device did not answer; retried with backoff.
            case unreachable
            /// No Bluetooth here (kernel or BlueZ); not retried.
            case unavailable
            /// The user's own reporter has this accessory: the driver leaves it alone.
            case yielded
            case failed
        }

        public var address: BluetoothAddress
        /// `aap`, `galaxy-buds` or `sony`.
        public var family: String
        public var name: String?
        public var connection: Connection
        /// The last problem, when not connected.
        public var problem: String?
        public var battery: BatteryReport?
        /// Whether the headset says it is worn, once the driver found out (Sony sets differ).
        public var wear: WearSupport?
        public var lastPacket: Date?
        public var packets: Int = 0
        public var skipped: Int = 0
        public var desktopBattery: String?
    }

    private let entries = Mutex<[BluetoothAddress: Entry]>([:])
    private let watchers = Mutex<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let nextWatcher = Atomic<UInt64>(0)

    public init() {}

    /// Yields after each change (changes in between coalesce), until the stream is dropped.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let token = nextWatcher.add(1, ordering: .relaxed).newValue
        watchers.withLock { $0[token] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: token) } }
        return stream
    }

    private func changed() {
        for watcher in watchers.withLock({ Array($0.values) }) { watcher.yield() }
    }

    public var snapshot: [Entry] {
        entries.withLock { $0.values.sorted { $0.address < $1.address } }
    }

    public func entry(for address: BluetoothAddress) -> Entry? {
        entries.withLock { $0[address] }
    }

    func begin(_ device: DriverDevice, family: AccessoryFamily.Kind) {
        entries.withLock {
            $0[device.address] = Entry(address: device.address, family: family.rawValue, name: device.name, connection: .connecting)
        }
        changed()
    }

    func update(_ address: BluetoothAddress, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            guard var entry = entries[address] else { return }
            change(&entry)
            entries[address] = entry
        }
        changed()
    }

    func end(_ address: BluetoothAddress) {
        _ = entries.withLock { $0.removeValue(forKey: address) }
        changed()
    }
}
