import Foundation
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a sink plays, as a listener of it would hear it: `parec` of the sink's monitor
/// (`<node.name>.monitor` through pipewire-pulse), raw s16le, 48 kHz stereo, read from a pipe on
/// a thread of its own and cut into 10 ms windows, each kept as its peak (the larger channel)
/// and the CLOCK_MONOTONIC time the read that completed it returned (its arrival: the capture
/// time plus parec's 10 ms fragment and the pipe). Waits are on the windows as they arrive.
final class MonitorRecorder: @unchecked Sendable {
    static let rate = 48_000
    static let channels = 2
    /// Frames per window: 10 ms.
    static let windowFrames = rate / 100
    static let windowMillis = 10

    let sink: String
    let process: ChildProcess
    private let condition = NSCondition()
    private var peaks: [Int32] = []
    private var arrivals: [UInt64] = []
    private var ended = false

    init(_ sandbox: PipeWireSandbox, sink: String, label: String) throws {
        self.sink = sink
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        do {
            process = try sandbox.spawn(
                "parec-\(label)",
                [
                    "parec", "--raw", "--device=\(sink).monitor", "--format=s16le", "--rate=\(Self.rate)", "--channels=\(Self.channels)",
                    "--latency-msec=10", "--client-name=earshot-bench-\(label)", "--stream-name=earshot-bench-\(label)",
                    // Stays on this monitor: WirePlumber 0.5 (`linking.follow-default-target`)
                    // moved the speakers' recorder, whose target was the default sink when it
                    // started, to the headphones' monitor when they became the default.
                    "--property=node.dont-reconnect=true",
                ], stdoutFD: writeEnd)
        } catch {
            close(readEnd)
            close(writeEnd)
            throw error
        }
        close(writeEnd)
        let thread = Thread { [self] in read(from: readEnd) }
        thread.name = "recorder-\(label)"
        thread.start()
    }

    /// The reader: whole windows as they complete; the bytes of a partial window wait for the next read.
    private func read(from fd: Int32) {
        defer { close(fd) }
        let frameBytes = 2 * Self.channels
        let windowBytes = Self.windowFrames * frameBytes
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pending: [UInt8] = []
        pending.reserveCapacity(windowBytes * 2)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            let now = monotonicNanos()
            pending.append(contentsOf: buffer[..<count])
            var completed: [Int32] = []
            var offset = 0
            while pending.count - offset >= windowBytes {
                var peak: Int32 = 0
                var index = offset
                let end = offset + windowBytes
                while index < end {
                    let sample = Int32(Int16(bitPattern: UInt16(pending[index]) | UInt16(pending[index + 1]) << 8))
                    peak = max(peak, abs(sample))
                    index += 2
                }
                completed.append(peak)
                offset = end
            }
            if offset > 0 { pending.removeFirst(offset) }
            guard !completed.isEmpty else { continue }
            condition.lock()
            peaks += completed
            arrivals += repeatElement(now, count: completed.count)
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// Windows so far.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return peaks.count
    }

    /// Blocks until `predicate` holds for the windows so far (checked now and at each read),
    /// failing after `timeout` or when parec has ended.
    func wait(_ what: String, timeout: Duration, _ predicate: (_ peaks: [Int32]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(peaks) {
            guard !ended else { throw BenchError("\(what): parec of \(sink).monitor ended (\(process.logTail(lines: 5)))") }
            guard condition.wait(until: deadline) || predicate(peaks) else {
                throw BenchError("\(what): not within \(timeout) (\(peaks.count) windows of \(sink).monitor)")
            }
        }
    }

    /// The windows in `range` (clamped): peaks and arrival times.
    func windows(_ range: Range<Int>) -> [(peak: Int32, arrival: UInt64)] {
        condition.lock()
        defer { condition.unlock() }
        let clamped = range.clamped(to: 0..<peaks.count)
        return clamped.map { (peaks[$0], arrivals[$0]) }
    }

    /// Stops parec by its PID; the reader ends at the pipe's EOF.
    func stop() { process.stop() }
}
