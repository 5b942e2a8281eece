import Synchronization
import SystemBridge

/// Drops, on the bus thread, signals that cannot come from BlueZ before they are queued for
/// the mirror. The match rules cannot name BlueZ's unique name, so any program on the system
/// bus can send signals that reach the watcher; were they all queued, a flood would grow the
/// queue whenever the watcher waits on a consumer. The mirror checks every signal again and
/// decides; this only keeps the queue to what it could act on.
final class BlueZSignalFilter: Sendable {
    /// org.bluez's unique owner as far as known; nil while none.
    private let owner = Mutex<String?>(nil)

    /// The watcher read the owner from the bus (`GetNameOwner`); called on its task.
    func owner(is name: String?) {
        owner.withLock { $0 = name }
    }

    /// Whether to queue `signal`; called on the bus thread, in the order signals arrive. The
    /// bus driver's NameOwnerChanged for org.bluez passes and moves the owner at once, so the
    /// new owner's next signals pass too.
    func admits(_ signal: DBusSignal) -> Bool {
        if signal.interface == BlueZInterface.busDriver, signal.member == "NameOwnerChanged" {
            let arguments = signal.arguments
            guard signal.sender == BlueZInterface.busDriver, arguments.count == 3, arguments[0].string == BlueZInterface.service,
                let newOwner = arguments[2].string
            else { return false }
            owner(is: newOwner.isEmpty ? nil : newOwner)
            return true
        }
        return owner.withLock { $0 != nil && $0 == signal.sender }
    }
}
