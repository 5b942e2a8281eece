import WireFields
import AudioGraph
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The live recordings' bounds: a recording is never left with a hole, and never grows without
/// limit.
@Suite(.blockingCalls)
struct InputRecorderTests {
    @Test("lines carry at from each recording's own start; the prefix comes first")
    func relativeTimes() async {
        let recorder = InputRecorder()
        let early = try! #require(recorder.begin(at: 1_000, prefix: [.object(["at": .integer(0), "register": .object([:])])]))
        recorder.record("select", .object(["node": .string("a")]), at: 1_500)
        let late = try! #require(recorder.begin(at: 2_000))
        recorder.record("remove", .object(["node": .string("a")]), at: 2_250)
        recorder.close()
        var first: [JSONValue] = []
        for await line in early { first.append(line) }
        var second: [JSONValue] = []
        for await line in late { second.append(line) }
        #expect(first.map { $0["at"] } == [.integer(0), .integer(500), .integer(1_250)])
        #expect(second.map { $0["at"] } == [.integer(250)])
    }

    @Test("a reader that falls behind the buffer is ended, not left with a hole; at most eight at once; none after close")
    func bounds() async {
        let recorder = InputRecorder()
        let slow = try! #require(recorder.begin(at: 0))
        for index in 0...InputRecorder.bufferLimit { recorder.record("select", .object(["node": .string("n\(index)")]), at: Int64(index)) }
        var received = 0
        for await _ in slow { received += 1 }
        #expect(received == InputRecorder.bufferLimit, "ended at the limit: every line it has is in order, none after a gap")
        let many = (0..<InputRecorder.maximumRecordings).compactMap { _ in recorder.begin(at: 0) }
        #expect(many.count == InputRecorder.maximumRecordings)
        #expect(recorder.begin(at: 0) == nil)
        recorder.close()
        #expect(recorder.begin(at: 0) == nil)
    }
}
