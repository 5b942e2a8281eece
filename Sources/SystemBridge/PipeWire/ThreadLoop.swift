import CPipeWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A `pw_thread_loop`: PipeWire's own thread, which runs every callback of the connection
/// with the loop lock held. Callers from other threads take the lock around every C call.
final class ThreadLoop: @unchecked Sendable {
    let raw: OpaquePointer
    /// The deadlines of waits on this loop (loop lock held).
    let deadlines: LoopDeadlines
    /// Who holds the lock, for `assertLockHeld()`.
    let lockCheck: LoopLockCheck

    init(name: String) throws(PipeWireError) {
        LibPipeWire.initialized
        guard let raw = pw_thread_loop_new(name, nil) else {
            // pw_thread_loop_new sets errno when it returns NULL.
            throw PipeWireError.requestFailed(operation: "pw_thread_loop_new", code: -errno, message: "cannot create the loop")
        }
        self.raw = raw
        lockCheck = LoopLockCheck(loop: raw)
        deadlines = LoopDeadlines(loop: pw_thread_loop_get_loop(raw), lockCheck: lockCheck)
    }

    var loop: UnsafeMutablePointer<pw_loop> { pw_thread_loop_get_loop(raw) }

    func start() throws(PipeWireError) {
        try check(pw_thread_loop_start(raw), "pw_thread_loop_start")
        lockCheck.loopThreadStarted()
    }

    /// True on the loop's own thread, where callbacks run and the lock is already held.
    var isCurrentThread: Bool { pw_thread_loop_in_thread(raw) }

    /// The lock is recursive, so this is safe from callbacks too.
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pw_thread_loop_lock(raw)
        lockCheck.locked()
        defer {
            lockCheck.unlocking()
            pw_thread_loop_unlock(raw)
        }
        return try body()
    }

    /// Traps in debug builds unless the caller holds the loop lock: it runs on the loop thread
    /// (a callback), inside `withLock`, or while no loop thread runs (before `start`, after
    /// `stop`). For the code documented "loop lock held".
    func assertLockHeld(file: StaticString = #fileID, line: UInt = #line) {
        lockCheck.assertHeld(file: file, line: line)
    }

    /// Joins the loop thread. Never call it from that thread.
    func stop() {
        precondition(!isCurrentThread, "a PipeWire thread loop cannot stop itself")
        // Before the stop, not after: PipeWire 1.4's pw_thread_loop_in_thread already answers
        // false on the loop thread while it runs its last iteration (seen as a false assertion
        // in a registry callback during close()).
        lockCheck.loopThreadStopped()
        pw_thread_loop_stop(raw)
    }

    deinit {
        withLock { deadlines.destroy() }
        pw_thread_loop_destroy(raw)
    }
}

/// Debug bookkeeping of a loop's lock: which thread took it through `withLock` (the lock is
/// recursive, hence the depth) and whether the loop thread runs. The loop thread holds the
/// lock whenever it runs our code (pw_thread_loop drops it only while it waits in poll), so
/// its callbacks pass without bookkeeping. In release builds every member does nothing.
final class LoopLockCheck: @unchecked Sendable {
    private let loop: OpaquePointer
    #if DEBUG
    /// pthread_t of the thread inside `withLock`, 0 when none.
    private let owner = Atomic<UInt>(0)
    /// How deep the owner is in nested `withLock`s; only the owner changes it.
    private let depth = Atomic<Int>(0)
    private let threadRunning = Atomic<Bool>(false)
    #endif

    init(loop: OpaquePointer) { self.loop = loop }

    func locked() {
        #if DEBUG
        if depth.add(1, ordering: .relaxed).newValue == 1 { owner.store(UInt(pthread_self()), ordering: .relaxed) }
        #endif
    }

    func unlocking() {
        #if DEBUG
        if depth.subtract(1, ordering: .relaxed).newValue == 0 { owner.store(0, ordering: .relaxed) }
        #endif
    }

    func loopThreadStarted() {
        #if DEBUG
        threadRunning.store(true, ordering: .sequentiallyConsistent)
        #endif
    }

    func loopThreadStopped() {
        #if DEBUG
        threadRunning.store(false, ordering: .sequentiallyConsistent)
        #endif
    }

    /// Whether the calling thread may touch loop-only state now (always true in release).
    var isHeld: Bool {
        #if DEBUG
        return !threadRunning.load(ordering: .sequentiallyConsistent)
            || pw_thread_loop_in_thread(loop)
            || owner.load(ordering: .relaxed) == UInt(pthread_self())
        #else
        return true
        #endif
    }

    func assertHeld(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(isHeld, "loop-only code ran without the PipeWire loop lock", file: file, line: line)
        #endif
    }
}
