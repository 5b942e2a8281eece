#if DEBUG
import Synchronization
import SystemPackage

/// Failures a test makes happen where the system would, without building what would cause them
/// (swift-system's `ForceErrno` idea): a full disk (`ENOSPC` from `write`), a failing one (`EIO`
/// from `fsync`), a read-only one (`EROFS` from `open`), a signal (`EINTR`, which the doors retry).
/// Every door in this folder names its call and path (`systemCall`, `retryingOnInterrupt`,
/// `FileSystem.rename`) and asks here first. Faults match by call name and a part of the path,
/// so tests running side by side, each in its own directory, never meet each other's faults.
/// Debug builds only: a release build has no hook and pays nothing.
public enum FaultInjection {
    /// One fault in force; `remove` it to stop it.
    public struct Token: Sendable, Hashable {
        let id: UInt64
    }

    struct Fault {
        var call: String
        var pathContaining: String
        var pathSuffix: String
        var errno: Errno
        var remaining: Int
    }

    private struct State {
        var next: UInt64 = 0
        var active: [UInt64: Fault] = [:]
        /// How many calls each fault has failed, kept after it ends.
        var uses: [UInt64: Int] = [:]
        /// Who waits for a fault to fail so many calls (`used`).
        var waiters: [UInt64: [(uses: Int, waiter: CheckedContinuation<Void, Never>)]] = [:]

        /// The waiters `id`'s uses (or its end) answer now, taken out.
        mutating func answered(_ id: UInt64) -> [CheckedContinuation<Void, Never>] {
            guard let waiting = waiters[id] else { return [] }
            let ended = active[id] == nil
            let used = uses[id] ?? 0
            let (ready, left) = (waiting.filter { ended || used >= $0.uses }, waiting.filter { !ended && used < $0.uses })
            waiters[id] = left.isEmpty ? nil : left
            return ready.map(\.waiter)
        }
    }

    private static let faults = Mutex(State())

    /// From now on, the next `times` calls named `call` (as its manual page names it: `write`,
    /// `fsync`, `open`, `rename`) on a path containing `pathContaining` fail with `errno`, in
    /// place of the call (a failed `close` injected this way leaves the descriptor open).
    /// `EINTR` is for the calls the doors retry themselves (`fsync`): each one is retried as a
    /// real one is, so it needs a finite `times`; swift-system's calls (`write`, `open`) retry
    /// EINTR inside, where no fault reaches, so one injected there goes through unseen.
    /// `endingWith` narrows it to one file of the test's directory (`events.jsonl`).
    @discardableResult
    public static func inject(
        _ errno: Errno, into call: String, onPathsContaining pathContaining: String, endingWith pathSuffix: String = "", times: Int = .max
    ) -> Token {
        precondition(errno != .interrupted || times < .max, "an EINTR retried for ever: give it a finite count")
        return faults.withLock { state in
            state.next += 1
            state.active[state.next] = Fault(call: call, pathContaining: pathContaining, pathSuffix: pathSuffix, errno: errno, remaining: times)
            return Token(id: state.next)
        }
    }

    /// Ends a fault (a fault whose `times` ran out has ended already).
    public static func remove(_ token: Token) {
        let waiters = faults.withLock { state in
            state.active[token.id] = nil
            return state.answered(token.id)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many calls the fault has failed so far.
    public static func uses(of token: Token) -> Int {
        faults.withLock { $0.uses[token.id] ?? 0 }
    }

    /// Returns once the fault has failed `times` calls (nil: all it was given), or has ended:
    /// a test knows the code under test met it, without watching for it.
    public static func used(_ token: Token, times: Int? = nil) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let answered = faults.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.waiters[token.id, default: []].append((times ?? .max, waiter))
                return state.answered(token.id)
            }
            for waiter in answered { waiter.resume() }
        }
    }

    /// The errno a call must fail with now, if a fault says so (and counts it).
    static func failure(of call: String, path: String?) -> Errno? {
        guard let path else { return nil }
        let (errno, waiters) = faults.withLock { state -> (Errno?, [CheckedContinuation<Void, Never>]) in
            let matching = state.active.filter { _, fault in
                fault.call == call && path.contains(fault.pathContaining) && path.hasSuffix(fault.pathSuffix)
            }
            // The oldest fault first, when two match.
            guard let (id, fault) = matching.min(by: { $0.key < $1.key }) else { return (nil, []) }
            state.uses[id, default: 0] += 1
            if fault.remaining <= 1 { state.active[id] = nil } else { state.active[id]?.remaining -= 1 }
            return (fault.errno, state.answered(id))
        }
        for waiter in waiters { waiter.resume() }
        return errno
    }
}
#endif
