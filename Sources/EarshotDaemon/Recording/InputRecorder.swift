import AudioGraph
import RoutingPolicy
import Synchronization

/// The live recordings (`earshot record`): each gets every input the policy saw, as the JSON
/// Lines `earshot eval --events` reads, with `at` in ms from its start. Written from the
/// daemon's actor as it takes each input, so a recording is in the order the policy saw.
/// Bounded: a recording whose reader falls `bufferLimit` lines behind is ended (a recording
/// with a hole would replay wrongly), and there are at most `maximumRecordings` at once.
final class InputRecorder: Sendable {
    static let bufferLimit = 50_000
    static let maximumRecordings = 8

    private struct Recording {
        let start: Milliseconds
        let lines: AsyncStream<JSONValue>.Continuation
    }

    private struct State {
        var recordings: [UInt64: Recording] = [:]
        var nextToken: UInt64 = 0
        /// The daemon stopped: no recording starts any more.
        var closed = false
    }

    private let state = Mutex(State())

    var isRecording: Bool { state.withLock { !$0.recordings.isEmpty } }

    /// Starts a recording at `now` whose first lines are `prefix`; nil when too many run
    /// already, or the daemon stopped.
    func begin(at now: Milliseconds, prefix: [JSONValue] = []) -> AsyncStream<JSONValue>? {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        let token = state.withLock { state -> UInt64? in
            guard !state.closed, state.recordings.count < Self.maximumRecordings else { return nil }
            state.nextToken += 1
            state.recordings[state.nextToken] = Recording(start: now, lines: continuation)
            return state.nextToken
        }
        guard let token else { return nil }
        for line in prefix { continuation.yield(line) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.recordings.removeValue(forKey: token) }
        }
        return stream
    }

    /// One input line: `{"at": …, verb: body}` to every recording.
    func record(_ verb: String, _ body: JSONValue, at now: Milliseconds) {
        let recordings = state.withLock { Array($0.recordings.values) }
        for recording in recordings {
            let line = JSONValue.object(["at": .integer(Int64(max(0, now - recording.start))), verb: body])
            if case .dropped = recording.lines.yield(line) { recording.lines.finish() }
        }
    }

    /// Ends every recording (the daemon stops).
    func close() {
        let recordings = state.withLock { state in
            state.closed = true
            defer { state.recordings.removeAll() }
            return Array(state.recordings.values)
        }
        for recording in recordings { recording.lines.finish() }
    }
}
