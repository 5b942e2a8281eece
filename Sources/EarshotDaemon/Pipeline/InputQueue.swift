import RoutingPolicy
import Synchronization

/// The daemon's one way in: every source submits inputs here and one consumer takes them in
/// order, each with all its side effects, before the next (a serial queue of effects: no
/// actor reentrancy can interleave two inputs). It also owns the placement timer, which
/// submits `.timerFired` when the policy's deadline comes.
///
/// Bounded by its submitters: each waits for its own input to be handled, so at most one
/// input per source (per control client, the PipeWire feed, the timer) is queued.
final class InputQueue: Sendable {
    struct Envelope: Sendable {
        var input: DaemonInput
        var reply: CheckedContinuation<InputResult, Never>?
    }

    let envelopes: AsyncStream<Envelope>
    private let continuation: AsyncStream<Envelope>.Continuation
    private let state = Mutex(State())

    private struct State {
        var finished = false
        var timer: Task<Void, Never>?
        /// The deadline the timer waits for, so an unchanged deadline keeps its timer.
        var timerDeadline: Milliseconds?
        /// Inputs submitted and not yet taken, and who waits for that count (tests).
        var waiting = 0
        var waitingWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    init() {
        (envelopes, continuation) = AsyncStream.makeStream(of: Envelope.self, bufferingPolicy: .unbounded)
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Queues `input` and returns once it has been handled (or `.stopped` when the daemon
    /// stops first).
    func submit(_ input: DaemonInput) async -> InputResult {
        await withCheckedContinuation { (reply: CheckedContinuation<InputResult, Never>) in
            let queued = state.withLock { state -> Bool in
                guard !state.finished else { return false }
                if case .terminated = continuation.yield(Envelope(input: input, reply: reply)) { return false }
                state.waiting += 1
                state.waitingWatchers.removeAll { watcher in
                    guard watcher.count <= state.waiting else { return false }
                    watcher.continuation.resume()
                    return true
                }
                return true
            }
            if !queued { reply.resume(returning: .stopped) }
        }
    }

    /// The consumer took a submitted input.
    func taken() {
        state.withLock { $0.waiting = max(0, $0.waiting - 1) }
    }

    /// Returns once at least `count` submitted inputs wait to be taken (so a test knows an
    /// input is queued behind the one being handled).
    func waitUntilWaiting(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { state in
                if state.waiting >= count { continuation.resume() } else { state.waitingWatchers.append((count, continuation)) }
            }
        }
    }

    /// Arms the timer for the policy's next deadline (nil: none pending), replacing the last
    /// one. Called by the consumer after each input, so the deadline is never a stale one.
    func scheduleTimer(at deadline: Milliseconds?, clock: any DaemonClock) {
        state.withLock { state in
            guard !state.finished, deadline != state.timerDeadline || state.timer == nil else { return }
            state.timer?.cancel()
            state.timer = nil
            state.timerDeadline = deadline
            guard let deadline else { return }
            state.timer = Task { [weak self] in
                do { try await clock.sleep(until: deadline) } catch { return }
                self?.timerFired(for: deadline)
            }
        }
    }

    private func timerFired(for deadline: Milliseconds) {
        state.withLock { state in
            guard state.timerDeadline == deadline, !state.finished else { return }
            state.timer = nil
            state.timerDeadline = nil
            continuation.yield(Envelope(input: .timerFired, reply: nil))
        }
    }

    /// Takes no more inputs: queued submitters are answered `.stopped` as the consumer
    /// drains them, later ones at once.
    func finish() {
        state.withLock { state in
            state.finished = true
            for watcher in state.waitingWatchers { watcher.continuation.resume() }
            state.waitingWatchers = []
            state.timer?.cancel()
            state.timer = nil
            continuation.finish()
        }
    }
}
