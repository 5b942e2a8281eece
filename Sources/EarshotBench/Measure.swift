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
    /// Per stream: since when the observer has seen it with no link at all, and the total
    /// unlinked time so far (closed when it is linked again).
    private var unlinkedSince: [ObjectID: UInt64] = [:]
    private var unlinkedNanos: [ObjectID: UInt64] = [:]
    var done: UInt64? { lock.withLock { _done } }
    /// The dropout of this switch as a listener of the worst-off stream hears it: the longest
    /// total time any one stream had no link at all, in milliseconds (0 without a gap).
    var dropoutMillis: Double { lock.withLock { Double(unlinkedNanos.values.max() ?? 0) / 1e6 } }
    var gap: Bool { lock.withLock { _gap != nil } }
    /// What the observer saw at the first gap: the unlinked streams and every link of the others.
    var gapDescription: String? { lock.withLock { _gap } }
    func markDone(_ at: UInt64) { lock.withLock { if _done == nil { _done = at } } }
    func markGap(_ description: @autoclosure () -> String) { lock.withLock { if _gap == nil { _gap = description() } } }
    /// Which streams have a link at all at `now` (called in every callback until the switch ends).
    func linkState(_ streams: Dictionary<ObjectID, Int>.Keys, linked: Set<ObjectID>, at now: UInt64) {
        lock.withLock {
            guard _done == nil else { return }
            for stream in streams {
                if linked.contains(stream) {
                    if let since = unlinkedSince.removeValue(forKey: stream) { unlinkedNanos[stream, default: 0] += now - since }
                } else if unlinkedSince[stream] == nil {
                    unlinkedSince[stream] = now
                }
            }
        }
    }
}

/// When the observer first saw a condition hold (e.g. `default.configured.audio.sink` naming
/// a sink: the moment a request reached PipeWire, one message later).
final class StampProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var _at: UInt64?
    var at: UInt64? { lock.withLock { _at } }
    func mark(_ at: UInt64) { lock.withLock { if _at == nil { _at = at } } }
}

func stamped(_ probe: StampProbe, _ condition: @escaping @Sendable (Graph) -> Bool) -> @Sendable (Graph) -> Bool {
    { graph in
        let now = monotonicNanos()
        guard condition(graph) else { return false }
        probe.mark(now)
        return true
    }
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
        probe.linkState(streams.keys, linked: linked, at: now)
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

/// The end of a switch as audio hears it: every following stream plays to `target` only
/// through links PipeWire reports `active` (a new link carries no audio until it is; a link
/// being destroyed carries none once it is gone). Records in `probe` each stream's time
/// without any active link: the silence a listener of that stream hears.
func audible(streams: [ObjectID: Int], target: ObjectID, probe: SwitchProbe) -> @Sendable (Graph) -> Bool {
    { graph in
        let now = monotonicNanos()
        var toTarget: [ObjectID: Int] = [:]
        var elsewhere = false
        var playing = Set<ObjectID>()
        for link in graph.links.values where streams[link.outputNode] != nil {
            let active = link.state == .active
            if active { playing.insert(link.outputNode) }
            if link.inputNode == target, active { toTarget[link.outputNode, default: 0] += 1 } else { elsewhere = true }
        }
        probe.linkState(streams.keys, linked: playing, at: now)
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
    /// Per switch: the longest time one following stream had no link at all (ms; 0 = none).
    var dropouts: [Double] = []
    /// Per switch: the longest time one following stream had no *active* link (ms): what a
    /// listener hears; nothing recorded for a switch whose links never all became active.
    var silences: [Double] = []

    var sorted: [Double] { millis.sorted() }
    func percentile(_ p: Double) -> Double {
        let values = sorted
        guard !values.isEmpty else { return .nan }
        let index = min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)
        return values[Swift.max(0, index)]
    }
    var p50: Double { percentile(0.50) }
    var p90: Double { percentile(0.90) }
    var p95: Double { percentile(0.95) }
    var p99: Double { percentile(0.99) }
    var max: Double { millis.max() ?? .nan }
    var dropout: Series { Series(name: name, millis: dropouts) }
    var silence: Series { Series(name: name, millis: silences) }

    var json: [String: Any] {
        var json: [String: Any] = ["switches": millis.count, "gaps": gaps, "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "max_ms": max]
        if !dropouts.isEmpty {
            json["dropout_ms"] = ["p50": dropout.p50, "p95": dropout.p95, "max": dropout.max]
        }
        if !silences.isEmpty {
            json["silence_ms"] = ["p50": silence.p50, "p95": silence.p95, "max": silence.max, "switches": silences.count]
        }
        return json
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

    /// The next line, or nil when none has come by `deadline` (CLOCK_MONOTONIC ns).
    func readLine(until deadline: UInt64) throws -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let now = monotonicNanos()
            let left = deadline > now ? Int32(clamping: (deadline - now + 999_999) / 1_000_000) : 0
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, left)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
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

/// A stand-in at a control socket path for timing a client's start-up: it accepts one
/// connection at a time, stamps (CLOCK_MONOTONIC) the moment the first request line has
/// arrived, and passes the line and the daemon's reply through to and from the real control
/// socket (connected as soon as the client's connection is accepted, so the hop adds only
/// the copy of one line each way). The client runs exactly as it does against the daemon.
final class StampingProxy: @unchecked Sendable {
    let path: String
    private let upstream: String
    private let listener: Int32
    private let lock = NSLock()
    private var stamps: [UInt64] = []

    init(path: String, upstream: String) throws {
        self.path = path
        self.upstream = upstream
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else { throw BenchError("stand-in socket \(path): errno \(errno)") }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// The stamp of the request that arrived last, taken (nil if none came since).
    func take() -> UInt64? { lock.withLock { defer { stamps.removeAll() }; return stamps.last } }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { if errno == EINTR { continue }; return }
            defer { close(client) }
            guard let daemon = try? UnixStreamSocket.connect(path: upstream) else { continue }
            guard let line = readLine(client) else { continue }
            let now = monotonicNanos()
            lock.withLock { stamps.append(now) }
            guard (try? daemon.sendAll(line)) != nil else { continue }
            guard let reply = readLine(daemon.descriptor) else { continue }
            _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Bytes up to and including the first newline (blocking), nil at EOF or error.
    private func readLine(_ fd: Int32) -> [UInt8]? {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !line.contains(0x0A) {
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            line.append(contentsOf: chunk[..<count])
        }
        return line
    }
}

/// One switch as the daemon timed it (`status` → `diagnostics.switch-spans`): CLOCK_MONOTONIC
/// nanoseconds of the request line read, the configured-default write handed to libpipewire,
/// and that write's echo taken.
struct DaemonSpan: Hashable {
    var read: UInt64
    var sent: UInt64
    var echo: UInt64

    /// The spans of a `status` reply line; none from a daemon older than them.
    static func parse(status line: String) -> [DaemonSpan] {
        guard let reply = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let status = reply["status"] as? [String: Any], let diagnostics = status["diagnostics"] as? [String: Any],
            let spans = diagnostics["switch-spans"] as? [[String: Any]]
        else { return [] }
        return spans.compactMap { span in
            guard let read = (span["read-ns"] as? NSNumber)?.uint64Value, let sent = (span["sent-ns"] as? NSNumber)?.uint64Value,
                let echo = (span["echo-ns"] as? NSNumber)?.uint64Value
            else { return nil }
            return DaemonSpan(read: read, sent: sent, echo: echo)
        }
    }
}

/// Earshot's own share of a path's switches: each bench switch (its send, in `starts`) paired
/// with the daemon's span whose read falls between that send and the next one.
struct OwnSpans {
    /// `status` is read after this many switches: under the daemon's 16 kept, so none is lost.
    static let readEvery = 8
    var readToSent = Series(name: "read → sent")
    var readToEcho = Series(name: "read → echo")
    var sendToRead = Series(name: "send → read")
    /// Switches with no span of their own (no write echoed, or a daemon without the stamps),
    /// and which they were (from 1).
    var unmatched = 0
    var unmatchedSwitches: [Int] = []

    init(starts: [UInt64], spans: [DaemonSpan]) {
        let spans = Set(spans).sorted { $0.read < $1.read }
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : .max
            guard let span = spans.first(where: { $0.read >= start && $0.read < end }) else {
                unmatched += 1
                unmatchedSwitches.append(index + 1)
                continue
            }
            readToSent.millis.append(Double(span.sent - span.read) / 1e6)
            readToEcho.millis.append(Double(span.echo - span.read) / 1e6)
            sendToRead.millis.append(Double(span.read - start) / 1e6)
        }
    }

    var json: [String: Any] {
        func summary(_ series: Series) -> [String: Any] {
            ["p50": series.p50, "p90": series.p90, "p95": series.p95, "max": series.max, "n": series.millis.count]
        }
        return [
            "read_to_sent_ms": summary(readToSent), "read_to_echo_ms": summary(readToEcho),
            "bench_send_to_read_ms": summary(sendToRead), "unmatched_switches": unmatched,
            "unmatched_switch_numbers": Array(unmatchedSwitches.prefix(20)),
        ]
    }
}
