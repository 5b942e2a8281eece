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

    private let recordings = Mutex(ListenerList<Recording>(capacity: maximumRecordings))

    var isRecording: Bool { recordings.withLock { !$0.isEmpty } }

    /// Starts a recording at `now` whose first lines are `prefix`; nil when too many run
    /// already, or the daemon stopped.
    func begin(at now: Milliseconds, prefix: [JSONValue] = []) -> AsyncStream<JSONValue>? {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        guard let token = recordings.withLock({ $0.add(Recording(start: now, lines: continuation)) }) else { return nil }
        for line in prefix { continuation.yield(line) }
        continuation.onTermination = { [weak self] _ in
            self?.recordings.withLock { $0.remove(token) }
        }
        return stream
    }

    /// One input line: `{"at": …, verb: body}` to every recording.
    func record(_ verb: String, _ body: JSONValue, at now: Milliseconds) {
        for recording in recordings.withLock({ $0.listeners }) {
            let line = JSONValue.object(["at": .integer(Int64(max(0, now - recording.start))), verb: body])
            if case .dropped = recording.lines.yield(line) { recording.lines.finish() }
        }
    }

    /// Ends every recording (the daemon stops).
    func close() {
        for recording in recordings.withLock({ $0.close() }) { recording.lines.finish() }
    }
}
