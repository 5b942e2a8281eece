import AudioGraph
import RoutingPolicy

/// Persistence: registrations and the history of defaults survive restarts.
extension Daemon {
    /// Loads the state file into the engine. Restored placements are stale until a reporter
    /// confirms them: they rank as before the restart (so a restart never moves audio), and
    /// `list` marks them `stale` until the reporter's next register or update.
    func restoreState() {
        do {
            persisted = try store.load()
        } catch {
            logger.warning("state file \(store.path) is unreadable (\(error)); starting clean")
            persisted = PersistedState()
            return
        }
        for registration in persisted.registrations {
            let outcome = engine.handle(.accessory(.register(registration.identity, reporter: registration.reporter, registration.configuration)), at: now)
            if let error = outcome.decision.error {
                logger.warning("saved registration of \(registration.identity) not restored: \(error.message)")
            } else {
                staleAccessories.insert(registration.identity)
            }
        }
        if !persisted.registrations.isEmpty {
            logger.info("restored \(persisted.registrations.count) registration(s) from \(store.path) (stale until their reporters confirm)")
        }
    }

    /// Queues a save of the current state (written off the actor, in order).
    func saveState() {
        writer.enqueue(currentState())
    }

    /// Saves the current state and returns once it is on disk (a request's reply waits for
    /// it, so a client that got its answer knows the change survives a crash).
    func saveStateAndWait() async {
        await writer.save(currentState())
    }

    /// Waits for every queued save: at shutdown.
    public func flushState() async {
        await writer.flush()
    }

    private func currentState() -> PersistedState {
        persisted.registrations = engine.accessories.entries.values.map(\.registration).sorted { $0.identity < $1.identity }
        if persisted.history.count > PersistedState.historyLimit {
            persisted.history.removeFirst(persisted.history.count - PersistedState.historyLimit)
        }
        return persisted
    }
}
