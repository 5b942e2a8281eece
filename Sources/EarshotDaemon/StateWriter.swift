import Dispatch
import Logging

/// Writes the state file on its own serial queue, off the daemon actor and off the
/// cooperative pool: a save fsyncs, and graph events must not wait behind the disk.
/// Saves are written in the order they were made.
final class StateWriter: Sendable {
    private let store: StateStore
    private let logger: Logger
    private let queue = DispatchQueue(label: "earshot.state-writer")

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Queues a save and returns at once.
    func enqueue(_ state: PersistedState) {
        queue.async { [store, logger] in Self.write(state, to: store, logger: logger) }
    }

    /// Queues a save and returns once it (and every earlier one) is on disk.
    func save(_ state: PersistedState) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [store, logger] in
                Self.write(state, to: store, logger: logger)
                continuation.resume()
            }
        }
    }

    /// Returns once every queued save is on disk.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    private static func write(_ state: PersistedState, to store: StateStore, logger: Logger) {
        do {
            try store.save(state)
        } catch {
            logger.error("cannot save state to \(store.path): \(error)")
        }
    }
}
