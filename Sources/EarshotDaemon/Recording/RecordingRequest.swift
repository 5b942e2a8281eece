import Synchronization

/// A recording (`earshot record`) asked for before the daemon's first graph: it begins with
/// that graph, as the daemon takes it (`Daemon.requestRecording`). Begun from the empty graph
/// before it, a replay would see the nodes present at start arrive, and make decisions the
/// daemon's start never made (a start holds the default it finds).
///
/// The daemon answers it once; the asker waits in `recording()`, and gives up when its task is
/// cancelled (the client went). A request given up before the answer gets no recording begun
/// for it (none is left running that nobody reads).
final class RecordingRequest: Sendable {
    private enum State {
        /// Not answered; the asker's continuation once it waits.
        case waiting(CheckedContinuation<InputRecording?, Never>?)
        /// Answered before the asker waited.
        case answered(InputRecording?)
        /// The asker gave up before the answer.
        case abandoned
        /// Handed to the asker.
        case done
    }

    private let state = Mutex(State.waiting(nil))

    /// The recording once the daemon answers (nil: none could begin, or the daemon stopped);
    /// nil at once when the calling task is cancelled first.
    func recording() async -> InputRecording? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<InputRecording?, Never>) in
                let ready: InputRecording?? = state.withLock { state in
                    switch state {
                    case .waiting:
                        state = .waiting(continuation)
                        return .none
                    case .answered(let recording):
                        state = .done
                        return .some(recording)
                    case .abandoned, .done:
                        return .some(nil)
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            abandon()
        }
    }

    /// The asker gave up: a later answer begins nothing.
    func abandon() {
        let waiting = state.withLock { state -> CheckedContinuation<InputRecording?, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .abandoned
            return continuation
        }
        waiting?.resume(returning: nil)
    }

    /// Whether the asker gave up.
    var isAbandoned: Bool {
        state.withLock { state in
            if case .abandoned = state { true } else { false }
        }
    }

    /// Answers with what `begin` returns, called only if the asker still waits (under the
    /// lock: a cancellation cannot come between the check and the recording's start).
    func answer(_ begin: () -> InputRecording?) {
        let answered = state.withLock { state -> (CheckedContinuation<InputRecording?, Never>, InputRecording?)? in
            guard case .waiting(let continuation) = state else { return nil }
            let recording = begin()
            guard let continuation else {
                state = .answered(recording)
                return nil
            }
            state = .done
            return (continuation, recording)
        }
        if let (continuation, recording) = answered { continuation.resume(returning: recording) }
    }
}
