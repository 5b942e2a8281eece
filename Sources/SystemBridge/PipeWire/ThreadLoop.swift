import CPipeWire
#if canImport(Glibc)
import Glibc
#endif

/// A `pw_thread_loop`: PipeWire's own thread, which runs every callback of the connection
/// with the loop lock held. Callers from other threads take the lock around every C call.
final class ThreadLoop: @unchecked Sendable {
    let raw: OpaquePointer
    /// The deadlines of waits on this loop (loop lock held).
    let deadlines: LoopDeadlines

    init(name: String) throws(PipeWireError) {
        LibPipeWire.initialized
        guard let raw = pw_thread_loop_new(name, nil) else {
            throw PipeWireError.requestFailed(operation: "pw_thread_loop_new", code: -errno, message: "cannot create the loop")
        }
        self.raw = raw
        deadlines = LoopDeadlines(loop: pw_thread_loop_get_loop(raw))
    }

    var loop: UnsafeMutablePointer<pw_loop> { pw_thread_loop_get_loop(raw) }

    func start() throws(PipeWireError) {
        let result = pw_thread_loop_start(raw)
        guard result >= 0 else {
            throw PipeWireError.requestFailed(operation: "pw_thread_loop_start", code: result, message: "cannot start the loop thread")
        }
    }

    /// True on the loop's own thread, where callbacks run and the lock is already held.
    var isCurrentThread: Bool { pw_thread_loop_in_thread(raw) }

    /// The lock is recursive, so this is safe from callbacks too.
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pw_thread_loop_lock(raw)
        defer { pw_thread_loop_unlock(raw) }
        return try body()
    }

    /// Joins the loop thread. Never call it from that thread.
    func stop() {
        precondition(!isCurrentThread, "a PipeWire thread loop cannot stop itself")
        pw_thread_loop_stop(raw)
    }

    deinit {
        withLock { deadlines.destroy() }
        pw_thread_loop_destroy(raw)
    }
}
