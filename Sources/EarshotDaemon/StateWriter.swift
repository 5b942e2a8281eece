import Dispatch
import Foundation
import Logging
import Synchronization
import SystemBridge

/// Writes the state file on its own serial queue, off the daemon actor and off the
/// cooperative pool: a save fsyncs, and graph events must not wait behind the disk.
/// Saves are written in the order they were made.
///
/// A save that fails is not silent: the reason (the errno's text and the path, from
/// SystemBridge's `SystemError`) is logged once per distinct reason, `problem` holds it for
/// `status`, and every later save tries again; the first one that succeeds says so. A writer
/// that was `block`ed (the file on disk is a newer version this Earshot must not overwrite)
/// writes nothing.
final class StateWriter: Sendable {
    private let store: StateStore
    private let logger: Logger
    private let queue = DispatchQueue(label: "earshot.state-writer")
    private let health = Mutex(Health())

    private struct Health {
        /// Why the last save failed (nil after one that succeeded).
        var failure: String?
        /// Why nothing is written at all.
        var blocked: String?
    }

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Why the state is not being saved, if it is not: what `status` shows.
    var problem: String? { health.withLock { $0.blocked ?? $0.failure } }

    /// From now on nothing is written, for `reason`.
    func block(_ reason: String) { health.withLock { $0.blocked = reason } }

    /// A problem known before any save (a directory where the file should be): shown by
    /// `status` until a save succeeds, and not logged again by a save that fails the same way.
    func noteFailure(_ reason: String) { health.withLock { $0.failure = reason } }

    /// Queues a save and returns at once.
    func enqueue(_ state: PersistedState) {
        queue.async { [self] in write(state) }
    }

    /// Queues a save and returns once it (and every earlier one) is on disk.
    func save(_ state: PersistedState) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                write(state)
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

    private func write(_ state: PersistedState) {
        guard health.withLock({ $0.blocked }) == nil else { return }
        do {
            try store.save(state)
            let recovered = health.withLock { health in
                defer { health.failure = nil }
                return health.failure != nil
            }
            if recovered { logger.notice("state saved to \(store.path) again") }
        } catch {
            let reason = StateStore.reason(error)
            let repeated = health.withLock { health in
                defer { health.failure = reason }
                return health.failure == reason
            }
            if !repeated {
                logger.error("cannot save state: \(reason); registrations and history will not survive a restart until this is fixed (retrying at every change)")
            }
        }
    }
}
