import CPipeWire
import CPipeWireShims
#if canImport(Glibc)
import Glibc
#endif

/// Deadlines of the waits on one loop, kept by one timer on the loop itself: armed for the
/// earliest pending deadline, disarmed when none is left. A wait that ends in time cancels
/// its deadline, so an idle connection has no timer armed at all (a sleeping task per wait
/// left a timer behind each time that fired seconds later, waking an idle daemon).
/// Every member is used with the loop lock held; callbacks run on the loop thread.
final class LoopDeadlines: @unchecked Sendable {
    private let loop: UnsafeMutablePointer<pw_loop>
    private let lockCheck: LoopLockCheck
    private var timer: UnsafeMutablePointer<spa_source>?
    private var pending: [UInt64: (at: UInt64, expire: () -> Void)] = [:]
    private var nextToken: UInt64 = 0
    private var armedFor: UInt64 = 0

    init(loop: UnsafeMutablePointer<pw_loop>, lockCheck: LoopLockCheck) {
        self.loop = loop
        self.lockCheck = lockCheck
    }

    /// Calls `expire` on the loop thread at `deadline` (CLOCK_MONOTONIC ns) unless cancelled.
    func add(at deadline: UInt64, _ expire: @escaping () -> Void) -> UInt64 {
        lockCheck.assertHeld()
        nextToken += 1
        pending[nextToken] = (deadline, expire)
        if armedFor == 0 || deadline < armedFor { arm(deadline) }
        return nextToken
    }

    func cancel(_ token: UInt64) {
        lockCheck.assertHeld()
        guard let removed = pending.removeValue(forKey: token) else { return }
        // Only the earliest deadline decides the timer; a later one going changes nothing.
        if removed.at <= armedFor { arm(pending.values.map(\.at).min() ?? 0) }
    }

    /// Frees the timer: before the loop is destroyed.
    func destroy() {
        lockCheck.assertHeld()
        if let timer { CPipeWire_loop_destroy_source(loop, timer) }
        timer = nil
        pending.removeAll()
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    fileprivate func fire() {
        lockCheck.assertHeld()
        let now = Self.now()
        let expired = pending.filter { $0.value.at <= now }
        for token in expired.keys { pending[token] = nil }
        arm(pending.values.map(\.at).min() ?? 0)
        for entry in expired.values.sorted(by: { $0.at < $1.at }) { entry.expire() }
    }

    private func arm(_ deadline: UInt64) {
        guard deadline != armedFor else { return }
        armedFor = deadline
        if timer == nil {
            guard deadline != 0 else { return }
            timer = CPipeWire_loop_add_timer(loop, { data, _ in
                guard let data else { return }
                Unmanaged<LoopDeadlines>.fromOpaque(data).takeUnretainedValue().fire()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        // timerfd_settime refuses only a bad descriptor or value, so this should not happen;
        // if it does, the timer counts as unarmed and the next add or cancel arms it again.
        if let timer, let failure = checked(CPipeWire_loop_update_timer(loop, timer, deadline), "arm the loop's deadline timer") {
            armedFor = 0
            assertionFailure(failure.description)
        }
    }
}
