import FoundationEssentials
import Logging
import RoutingPolicy
import SystemBridge
import SystemPackage
import Dispatch

/// Persistence: registrations and the history of defaults survive restarts. Loads once at
/// start; saves are written off the actor, in order (`StateWriter`). Also owns which restored
/// registrations are still *stale* (not yet confirmed by their reporters).
struct StatePersister {
    let store: StateStore
    private let writer: StateWriter
    private let logger: Logger
    private(set) var staleAccessories: Set<AccessoryIdentity> = []
    /// The engine's placement transitions once the state was restored: more at the first graph
    /// means a reporter already changed something, and the start is no longer a plain restart.
    var transitionsAfterRestore = 0
    /// Each restored registration's placement: one reported differently before the first graph
    /// is a transition too, even while it has not taken effect (an off-head still in its grace).
    var placementsAfterRestore: [AccessoryIdentity: Placement?] = [:]
    /// Each side's choices as the state file had them at start, for the first graph.
    var restoredChoices: [AudioDirection: PersistedState.Choice] = [:]
    /// The streams a daemon before this one held silent and did not give back.
    var restoredHeld: [HeldStream] = []
    /// The keys under which the session manager may still remember a mute of that daemon's.
    var restoredMutedKeys: Set<String> = []
    /// The state file was read (once per daemon: before its ways in open, or at `run`).
    var restored = false

    init(path: String, logger: Logger, writerQueue: DispatchQueue = DispatchQueue(label: "earshot.state-writer")) {
        store = StateStore(path: path)
        writer = StateWriter(store: store, logger: logger, queue: writerQueue)
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
                "rename", path: store.path, detail: "a directory is where the state file should be", code: Errno.isDirectory.rawValue)))
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
        // ISO 8601's basic format (no separators), in UTC.
        date.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, dateTimeSeparator: .standard, timeSeparator: .omitted, timeZone: .gmt))
    }

    mutating func markStale(_ identity: AccessoryIdentity) { staleAccessories.insert(identity) }

    /// A reporter spoke for `identity`: its registration is current again.
    mutating func confirm(_ identity: AccessoryIdentity) { staleAccessories.remove(identity) }

    /// Saves the engine's registrations and the history. Never waits: the newest state is
    /// handed to the writer (copy-on-write references; the sorted list is built and encoded on
    /// the writer's queue, once per write however many changes came meanwhile). A change a
    /// client waits for is waited for by its reply (`saved()`), not here: the daemon goes on
    /// taking inputs, and a burst shares one write.
    func save(_ engine: PolicyEngine, history: [PersistedState.HistoryEntry], held: [HeldStream] = [], mutedKeys: Set<String> = []) async {
        let entries = engine.accessories.entries
        var choices: [AudioDirection: PersistedState.Choice] = [:]
        for direction in AudioDirection.allCases {
            let (last, override) = engine.choices(of: direction)
            choices[direction] = PersistedState.Choice(lastChoice: last, override: override)
        }
        let saved = choices
        writer.offer {
            PersistedState(
                registrations: entries.values.map(\.registration).sorted { $0.identity < $1.identity }, history: history, choices: saved, held: held, mutedKeys: mutedKeys)
        }
    }

    /// What waits until every change saved so far is on disk, without holding the daemon.
    func saved() -> @Sendable () async -> Void {
        let writer = writer
        let generation = writer.offered
        return { await writer.waitUntilWritten(generation) }
    }

    /// How many times the whole state was encoded and written.
    var writeCount: Int { writer.writeCount }

    /// Returns once every change saved so far is on disk (or its write failed; `problem` says
    /// why): at shutdown, and in tests.
    func flush() async {
        await writer.flush()
    }
}
