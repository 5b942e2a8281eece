import AccessoryDrivers
import Foundation
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
        /// `aap` or `galaxy-buds`.
        public var family: String
        public var name: String?
        public var connection: Connection
        /// The last problem, when not connected.
        public var problem: String?
        public var battery: BatteryReport?
        public var lastPacket: Date?
        public var packets: Int = 0
        public var skipped: Int = 0
    }

    private let entries = Mutex<[BluetoothAddress: Entry]>([:])

    public init() {}

    public var snapshot: [Entry] {
        entries.withLock { $0.values.sorted { $0.address < $1.address } }
    }

    public func entry(for address: BluetoothAddress) -> Entry? {
        entries.withLock { $0[address] }
    }

    func begin(_ device: DriverDevice, family: DriverFamily) {
        entries.withLock {
            $0[device.address] = Entry(address: device.address, family: family.rawValue, name: device.name, connection: .connecting)
        }
    }

    func update(_ address: BluetoothAddress, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            guard var entry = entries[address] else { return }
            change(&entry)
            entries[address] = entry
        }
    }

    func end(_ address: BluetoothAddress) {
        _ = entries.withLock { $0.removeValue(forKey: address) }
    }
}
