import Logging
import RoutingPolicy

/// Persistence: registrations and the history of defaults survive restarts. Loads once at
/// start; saves are written off the actor, in order (`StateWriter`). Also owns which restored
/// registrations are still *stale* (not yet confirmed by their reporters).
struct StatePersister {
    let store: StateStore
    private let writer: StateWriter
    private let logger: Logger
    private(set) var staleAccessories: Set<AccessoryIdentity> = []

    init(path: String, logger: Logger) {
        store = StateStore(path: path)
        writer = StateWriter(store: store, logger: logger)
        self.logger = logger
    }

    /// The saved state; an unreadable file is reported and treated as empty.
    func load() -> PersistedState {
        do {
            return try store.load()
        } catch {
            logger.warning("state file \(store.path) is unreadable (\(error)); starting clean")
            return PersistedState()
        }
    }

    mutating func markStale(_ identity: AccessoryIdentity) { staleAccessories.insert(identity) }

    /// A reporter spoke for `identity`: its registration is current again.
    mutating func confirm(_ identity: AccessoryIdentity) { staleAccessories.remove(identity) }

    /// Saves the engine's registrations and the history: queued (returns at once), or
    /// `durably` (returns once on disk, so a client that got its answer knows the change
    /// survives a crash).
    func save(_ engine: PolicyEngine, history: [PersistedState.HistoryEntry], durably: Bool) async {
        let state = PersistedState(
            registrations: engine.accessories.entries.values.map(\.registration).sorted { $0.identity < $1.identity },
            history: history)
        if durably { await writer.save(state) } else { writer.enqueue(state) }
    }

    /// Waits for every queued save: at shutdown.
    func flush() async {
        await writer.flush()
    }
}
