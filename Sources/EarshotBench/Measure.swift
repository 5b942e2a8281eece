import AudioGraph
import Foundation
import EarshotDaemon
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// What one switch's watcher saw, written from the observer's loop thread.
final class SwitchProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var _done: UInt64?
    private var _gap: String?
    var done: UInt64? { lock.withLock { _done } }
    var gap: Bool { lock.withLock { _gap != nil } }
    /// What the observer saw at the first gap: the unlinked streams and every link of the others.
    var gapDescription: String? { lock.withLock { _gap } }
    func markDone(_ at: UInt64) { lock.withLock { if _done == nil { _done = at } } }
    func markGap(_ description: @autoclosure () -> String) { lock.withLock { if _gap == nil { _gap = description() } } }
}

/// The condition a switch ends on: every following stream linked to `target` only, one link
/// per output port (so the old links are gone). Also records a gap whenever a stream has no
/// link at all. Runs in the observer's registry/info callbacks (the loop thread), where the
/// timestamp is taken.
func routed(streams: [ObjectID: Int], target: ObjectID, probe: SwitchProbe) -> @Sendable (Graph) -> Bool {
    { graph in
        let now = monotonicNanos()
        var toTarget: [ObjectID: Int] = [:]
        var elsewhere = false
        var linked = Set<ObjectID>()
        for link in graph.links.values where streams[link.outputNode] != nil {
            linked.insert(link.outputNode)
            if link.inputNode == target { toTarget[link.outputNode, default: 0] += 1 } else { elsewhere = true }
        }
        if linked.count < streams.count {
            probe.markGap(
                "unlinked \(streams.keys.filter { !linked.contains($0) }.sorted()); links "
                    + graph.links.values.filter { streams[$0.outputNode] != nil }.sorted { $0.id < $1.id }
                    .map { "\($0.id):\($0.outputNode)→\($0.inputNode)" }.joined(separator: " "))
        }
        guard !elsewhere, streams.allSatisfy({ toTarget[$0.key] == $0.value }) else { return false }
        probe.markDone(now)
        return true
    }
}

/// Latencies of one path, in milliseconds.
struct Series {
    var name: String
    var millis: [Double] = []
    var gaps = 0

    var sorted: [Double] { millis.sorted() }
    func percentile(_ p: Double) -> Double {
        let values = sorted
        guard !values.isEmpty else { return .nan }
        let index = min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)
        return values[Swift.max(0, index)]
    }
    var p50: Double { percentile(0.50) }
    var p95: Double { percentile(0.95) }
    var p99: Double { percentile(0.99) }
    var max: Double { millis.max() ?? .nan }

    var json: [String: Any] {
        ["switches": millis.count, "gaps": gaps, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "max_ms": max]
    }
}

/// VmRSS of a process, in KiB.
func residentKiB(of pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
    return nil
}

/// utime + stime of a process, in clock ticks.
func cpuTicks(of pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
    return user + system
}

/// A blocking JSON Lines client of the control socket, kept open across switches.
final class ControlLine: @unchecked Sendable {
    private let socket: UnixStreamSocket
    var fd: Int32 { socket.descriptor }
    private var pending: [UInt8] = []
    private var nextID = 1

    init(path: String) throws {
        socket = try UnixStreamSocket.connect(path: path)
    }

    /// Sends a request without waiting for its reply.
    func send(_ fields: String) {
        let line = Array("{\"id\":\(nextID),\(fields)}\n".utf8)
        nextID += 1
        var offset = 0
        while offset < line.count {
            let written = line[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }

    /// Reads the next reply line (blocking, with a deadline).
    @discardableResult
    func readLine(timeout: Int32 = 10_000) throws -> String {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeout) > 0 else { throw BenchError("no reply from the daemon within \(timeout) ms") }
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { throw BenchError("the daemon closed the control connection") }
            pending.append(contentsOf: chunk[..<count])
        }
    }

    func request(_ fields: String) throws -> String {
        send(fields)
        let reply = try readLine()
        guard reply.contains("\"ok\":true") else { throw BenchError("refused: \(reply)") }
        return reply
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
