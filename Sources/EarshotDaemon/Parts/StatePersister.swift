import Foundation
import Logging
import RoutingPolicy
import SystemBridge

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

    /// Why the state is not being saved, if it is not (for `status`).
    var problem: String? { writer.problem }

    /// The saved state. Whatever keeps it from being read is said once, at start:
    /// - a directory where the file should be: reported, and shown by `status` (saves keep
    ///   trying and succeed once it is gone);
    /// - a file of a newer version: kept as it is, and nothing is saved over it;
    /// - anything else unreadable (garbage, a wrong field): moved aside to
    ///   `state.json.corrupt-<UTC time>`, so a clean state is saved without destroying it.
    func load(now: Date = Date()) -> PersistedState {
        if case .directory? = (try? FileSystem.entry(at: store.path))?.kind {
            let reason = "\(store.path) is a directory, not a state file: remove it (or start with another --state path)"
            logger.error("cannot save state: \(reason)")
            writer.noteFailure(StateStore.reason(SystemError(
                "rename", path: store.path, detail: "a directory is where the state file should be", code: EISDIR)))
            return PersistedState()
        }
        do {
            return try store.load()
        } catch let error as StateFileError where error.isNewerVersion {
            let reason = "\(store.path) was written by a newer Earshot (\(error.problem)); it is kept as it is and not overwritten: run that Earshot, or move the file away to start clean"
            logger.error("state not restored and not saved: \(reason)")
            writer.block("refusing to overwrite a newer state file: \(reason)")
            return PersistedState()
        } catch {
            let aside = "\(store.path).corrupt-\(Self.stamp(now))"
            do {
                try FileSystem.rename(store.path, to: aside)
                logger.warning("state file \(store.path) is unreadable (\(error)); moved aside to \(aside), starting clean")
            } catch {
                logger.error("state file \(store.path) is unreadable and cannot be moved aside (\(error)); starting clean")
            }
            return PersistedState()
        }
    }

    /// `20261122T213100Z`: a UTC time that sorts and has no colon.
    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
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
