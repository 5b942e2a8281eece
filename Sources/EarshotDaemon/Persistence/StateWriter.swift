import Dispatch
import FoundationEssentials
import Logging
import Synchronization
import SystemBridge

/// Writes the state file on its own serial queue, off the daemon actor and off the
/// cooperative pool: a save fsyncs, and graph events must not wait behind the disk.
///
/// Saves are coalesced: `offer` only keeps the newest snapshot (a closure over copy-on-write
/// references to the registrations and history) and, unless a write is already queued or
/// running, queues one. The write builds and encodes whichever snapshot is newest when it runs,
/// so a burst of changes costs one encode per write the disk can take, not one per change, and
/// the daemon's own per-change cost does not grow with the number of registrations. Each offer
/// has a generation; `waitUntilWritten` returns once a write that included it is done (or
/// failed): that is how a reply waits for its change to be durable.
///
/// A save that fails is not silent: the reason (the errno's text and the path, from
/// SystemBridge's `SystemError`) is logged once per distinct reason, `problem` holds it for
/// `status`, and every later save tries again; the first one that succeeds says so. A writer
/// that was `block`ed (the file on disk is a newer version this Earshot must not overwrite)
/// writes nothing.
final class StateWriter: Sendable {
    typealias Snapshot = @Sendable () -> PersistedState

    private let store: StateStore
    private let logger: Logger
    private let queue: DispatchQueue
    private let health = Mutex(Health())
    private let pending = Mutex(Pending())
    /// The bytes of each registration last written (used on the queue only).
    private let fragments = Mutex(StateFile.FragmentCache())

    private struct Health {
        /// Why the last save failed (nil after one that succeeded).
        var failure: String?
        /// Why nothing is written at all.
        var blocked: String?
        /// How many times the state was encoded and written (or tried).
        var writes = 0
    }

    private struct Pending {
        var snapshot: Snapshot?
        var offered: UInt64 = 0
        var written: UInt64 = 0
        var draining = false
        var waiters: [(generation: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// `queue` lets a test hold the writer to see what a burst coalesces into.
    init(store: StateStore, logger: Logger, queue: DispatchQueue = DispatchQueue(label: "earshot.state-writer")) {
        self.store = store
        self.logger = logger
        self.queue = queue
    }

    /// Why the state is not being saved, if it is not: what `status` shows.
    var problem: String? { health.withLock { $0.blocked ?? $0.failure } }

    /// How many writes were made (each one encode of the whole state).
    var writeCount: Int { health.withLock { $0.writes } }

    /// From now on nothing is written, for `reason`.
    func block(_ reason: String) { health.withLock { $0.blocked = reason } }

    /// A problem known before any save (a directory where the file should be): shown by
    /// `status` until a save succeeds, and not logged again by a save that fails the same way.
    func noteFailure(_ reason: String) { health.withLock { $0.failure = reason } }

    /// Makes `snapshot` the state to write next; returns its generation at once.
    @discardableResult
    func offer(_ snapshot: @escaping Snapshot) -> UInt64 {
        let (generation, start) = pending.withLock { pending -> (UInt64, Bool) in
            pending.snapshot = snapshot
            pending.offered += 1
            let start = !pending.draining
            pending.draining = true
            return (pending.offered, start)
        }
        if start { queue.async { [self] in drain() } }
        return generation
    }

    /// Queues a save and returns at once.
    func enqueue(_ state: PersistedState) {
        offer { state }
    }

    /// Saves `state` and returns once it (or a newer one) is on disk.
    func save(_ state: PersistedState) async {
        await waitUntilWritten(offer { state })
    }

    /// Returns once a write that included generation `generation` is done.
    func waitUntilWritten(_ generation: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = pending.withLock { pending -> Bool in
                if pending.written >= generation { return true }
                pending.waiters.append((generation, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The newest generation offered.
    var offered: UInt64 { pending.withLock { $0.offered } }

    /// Returns once everything offered so far is on disk.
    func flush() async {
        await waitUntilWritten(offered)
    }

    /// Writes the newest snapshot until none is left.
    private func drain() {
        while true {
            let next = pending.withLock { pending -> (snapshot: Snapshot, generation: UInt64)? in
                guard let snapshot = pending.snapshot else {
                    pending.draining = false
                    return nil
                }
                pending.snapshot = nil
                return (snapshot, pending.offered)
            }
            guard let next else { return }
            write(next.snapshot())
            let ready = pending.withLock { pending -> [CheckedContinuation<Void, Never>] in
                pending.written = next.generation
                let ready = pending.waiters.filter { $0.generation <= next.generation }.map(\.continuation)
                pending.waiters.removeAll { $0.generation <= next.generation }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }
    }

    private func write(_ state: PersistedState) {
        guard health.withLock({ $0.blocked }) == nil else { return }
        health.withLock { $0.writes += 1 }
        do {
            try fragments.withLock { cache in try store.save(state, reusing: &cache) }
            let recovered = health.withLock { health -> Bool in
                defer { health.failure = nil }
                return health.failure != nil
            }
            if recovered { logger.notice("state saved to \(store.path) again") }
        } catch {
            let reason = StateStore.reason(error)
            let repeated = health.withLock { health -> Bool in
                defer { health.failure = reason }
                return health.failure == reason
            }
            if !repeated {
                logger.error("cannot save state: \(reason); registrations and history will not survive a restart until this is fixed (retrying at every change)")
            }
        }
    }
}
