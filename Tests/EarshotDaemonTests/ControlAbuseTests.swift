import PolicyEval
import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import TestScheduling
import Testing
import SystemBridge

/// The long version (EARSHOT_LONG_TESTS=1) sends 1M hostile messages: ≈ 10× the short one's time.
private let longTests = ProcessInfo.processInfo.environment["EARSHOT_LONG_TESTS"] == "1"

/// Clients that would stall a naive server: one that never reads, one of another user.
/// The time limits guard against a hang only (a loaded run took over 2 min for the short
/// version, issue 28); how fast the server answers is scripts/bench's to say.
@Suite("control abuse", .timeLimit(longTests ? .minutes(40) : .minutes(10)), .blockingCalls)
struct ControlAbuseTests {
    @Test("a subscriber that never reads is disconnected once its output passes the bound; another client is answered promptly meanwhile")
    func slowSubscriber() async throws {
        let limits = ControlLimits(maximumPendingOutputBytes: 64 * 1024)
        try await ControlFixture.with(limits: limits) { fixture in
            let slow = try RawControlSocket(path: fixture.socketPath)
            _ = try await slow.request(#"{"op":"subscribe"}"#)
            let prompt = try RawControlSocket(path: fixture.socketPath)
            // A reply means the server has accepted it (connect returns once the kernel queued it).
            _ = try await prompt.request(#"{"op":"status"}"#)
            #expect(fixture.server.connectionCount == 2)

            let summary = String(repeating: "s", count: 1000)
            var slowest = Duration.zero
            var emitted = 0
            // ~1 KiB per event; the kernel's socket buffer (~200 KiB) plus the 64 KiB bound is
            // a few hundred events. 20 000 is the give-up point.
            while fixture.server.connectionCount == 2, emitted < 20_000 {
                for _ in 0..<100 { await fixture.control.emit(.route(summary: summary)) }
                emitted += 100
                let started = ContinuousClock.now
                let reply = try await prompt.request(#"{"op":"status"}"#, timeout: .seconds(120))
                slowest = max(slowest, ContinuousClock.now - started)
                #expect(reply["ok"] == .bool(true))
            }
            #expect(fixture.server.connectionCount == 1, "the slow subscriber is still connected after \(emitted) events")
            // What matters is the order: every status was answered while the slow subscriber
            // was being fed (each round above). How fast is the benchmark's to say; a bound in
            // seconds here failed on loaded runs (issue 28).
            print("control abuse, slow subscriber: \(emitted) events, slowest status \(slowest)")
            // What the kernel still held for it can be read, then the end.
            try await slow.waitForClose()
            #expect(try await prompt.request(#"{"op":"list"}"#)["ok"] == .bool(true))
        }
    }

    @Test("a client that floods requests without reading replies is cut off; others go on")
    func floodWithoutReading() async throws {
        let limits = ControlLimits(maximumPendingOutputBytes: 32 * 1024)
        try await ControlFixture.with(limits: limits) { fixture in
            let flood = try RawControlSocket(path: fixture.socketPath)
            let other = try RawControlSocket(path: fixture.socketPath)
            let request = Array(#"{"op":"list"}"#.utf8) + [0x0A]
            var sentBytes = 0
            // Stop at the disconnect (send fails) or after 8 MiB of requests.
            do {
                while sentBytes < 8 << 20 {
                    try await flood.send(Array(repeating: request, count: 1000).flatMap { $0 })
                    sentBytes += 1000 * request.count
                }
            } catch {}
            #expect(try await other.request(#"{"op":"status"}"#)["ok"] == .bool(true))
            try await flood.waitForClose(timeout: .seconds(20))
        }
    }

    @Test("at volume: 100k malformed, oversized, partial and random messages from many concurrent clients, plus clients that never read or never finish a line → no crash, a well-behaved client answered promptly throughout")
    func hostileVolume() async throws {
        let total = longTests ? 1_000_000 : 100_000
        let workers = 8
        try await ControlFixture.with { fixture in
            // Clients that stall: subscribed and never reading, half a line and nothing more.
            var stallers: [RawControlSocket] = []
            for index in 0..<24 {
                let client = try RawControlSocket(path: fixture.socketPath)
                try await client.send(index % 2 == 0 ? #"{"op":"subscribe"}"# + "\n" : #"{"op":"sta"#)
                stallers.append(client)
            }
            let tally = HostileTally()
            let path = fixture.socketPath
            let hostile = Task.detached {
                try await offPool {
                    let group = DispatchGroup()
                    for worker in 0..<workers {
                        group.enter()
                        Thread {
                            HostileClient(path: path, seed: UInt64(worker + 1), tally: tally).run(messages: total / workers)
                            group.leave()
                        }.start()
                    }
                    group.wait()
                }
            }
            // The well-behaved client: back-to-back status requests while the flood runs.
            let good = try RawControlSocket(path: fixture.socketPath)
            var latencies: [Duration] = []
            // Which fifths of the flood saw a status answered: the good client is served
            // throughout, not once the flood is over.
            var fifthsServed = Set<Int>()
            while tally.finishedWorkers < workers {
                let started = ContinuousClock.now
                let reply = try await good.request(#"{"op":"status"}"#, timeout: .seconds(120))
                latencies.append(started.duration(to: .now))
                #expect(reply["ok"] == .bool(true))
                if tally.finishedWorkers == 0 { fifthsServed.insert(min(4, tally.sent * 5 / total)) }
            }
            try await hostile.value
            latencies.sort()
            let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            let worst = latencies.last ?? .zero
            print("control abuse at volume: \(tally.sent) hostile messages (\(tally.reconnects) reconnects after disconnects, \(tally.errorReplies) error replies); \(latencies.count) status requests meanwhile, p50 \(latencies[latencies.count / 2]), p99 \(p99), max \(worst)")
            #expect(tally.sent >= total)
            #expect(tally.errorReplies > 0)
            // Answered throughout: in at least four fifths of the flood while all its clients ran
            // (the last may end as the workers do; by
            // order, not a bound in seconds: loaded runs saw 2.4 s and more; the latency figures
            // are printed above, and are scripts/bench's to judge).
            #expect(fifthsServed.count >= 4, "status answered only in fifths \(fifthsServed.sorted()) of the flood; p99 \(p99), max \(worst)")
            // Still serving, and the stallers did not pile up state: a fresh client is answered.
            let fresh = try RawControlSocket(path: fixture.socketPath)
            #expect(try await fresh.request(#"{"op":"list"}"#)["ok"] == .bool(true))
            withExtendedLifetime(stallers) {}
        }
    }

    @Test("socket 0600 in a directory created 0700")
    func modes() async throws {
        try await ControlFixture.with { fixture in
            let directory = (fixture.socketPath as NSString).deletingLastPathComponent
            var info = stat()
            #expect(lstat(directory, &info) == 0)
            #expect(info.st_mode & 0o7777 == 0o700)
            #expect(lstat(fixture.socketPath, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o7777 == 0o600)
        }
    }

    @Test("a client of another uid gets an invalid-request reply naming the uid, and the connection is closed")
    func otherUserRefused() async throws {
        guard getuid() == 0 else {
            Issue.record("connecting as nobody needs root (setpriv); this test runs as uid \(getuid())")
            return
        }
        try await ControlFixture.with(traversable: true) { fixture in
            // Open the socket's mode so the kernel lets nobody connect: the uid check is what must refuse.
            #expect(chmod(fixture.socketPath, 0o666) == 0)
            let log = fixture.root.appendingPathComponent("nobody.log")
            let client = try ChildProcess(
                name: "socat-as-nobody",
                arguments: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            "socat", "-t", "10", "-", "UNIX-CONNECT:\(fixture.socketPath)"],
                environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"], logFile: log)
            defer { client.stop() }
            let status = try await offPool { client.waitForExit(timeout: .seconds(20)) }
            #expect(status == 0, "socat as nobody: \(client.logTail())")
            let output = try String(contentsOf: log, encoding: .utf8)
            let reply = try JSONValue.parse(try #require(output.split(separator: "\n").first.map(String.init), "no reply: \(output)"))
            #expect(reply["ok"] == .bool(false))
            #expect(reply["error"]?["code"] == .string("invalid-request"))
            #expect(reply["error"]?["message"]?.propertyText?.contains("uid 65534") == true)

            // The owner is still served.
            let owner = try RawControlSocket(path: fixture.socketPath)
            #expect(try await owner.request(#"{"op":"status"}"#)["ok"] == .bool(true))
        }
    }
}

/// Counters the hostile clients share.
final class HostileTally: @unchecked Sendable {
    private let lock = NSLock()
    private var _sent = 0, _reconnects = 0, _errorReplies = 0, _finished = 0
    var sent: Int { lock.withLock { _sent } }
    var reconnects: Int { lock.withLock { _reconnects } }
    var errorReplies: Int { lock.withLock { _errorReplies } }
    var finishedWorkers: Int { lock.withLock { _finished } }
    func add(sent: Int = 0, reconnects: Int = 0, errorReplies: Int = 0, finished: Int = 0) {
        lock.withLock {
            _sent += sent
            _reconnects += reconnects
            _errorReplies += errorReplies
            _finished += finished
        }
    }
}

/// A client that sends a seeded mix of bad input and drains what comes back, reconnecting
/// whenever the server cuts it off. Blocking; runs on a thread of its own.
struct HostileClient {
    let path: String
    let seed: UInt64
    let tally: HostileTally

    func run(messages: Int) {
        defer { tally.add(finished: 1) }
        var random = SplitMix64(seed: seed)
        var fd: Int32 = -1
        var sent = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while sent < messages {
            if fd < 0 {
                guard let connected = try? UnixStreamSocket.connect(path: path).releaseDescriptor() else { continue }
                fd = connected
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }
            // A batch of 64 messages in one write, then drain the replies that are there.
            var batch: [UInt8] = []
            var count = 0
            var closeAfter = false
            for _ in 0..<64 {
                let kind = random.next() % 1000
                switch kind {
                case 0..<300: batch += Array(#"{"op":"status""#.utf8) + [0x0A]  // unterminated object
                case 300..<450: batch += Array(#"{"op":"nope","id":1}"#.utf8) + [0x0A]  // unknown op
                case 450..<550: batch += Array(#"{"op":"update","accessory":"zz","placement":3}"#.utf8) + [0x0A]  // bad fields
                case 550..<650: batch += Array(#"[1,2,{"op":"list"}]"#.utf8) + [0x0A]  // not an object
                case 650..<700: batch += Array(repeating: UInt8(ascii: "["), count: 4000) + [0x0A]  // deep nesting
                case 700..<950:  // random bytes, newlines and NULs included
                    let length = Int(random.next() % 200) + 1
                    batch += (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) } + [0x0A]
                case 950..<995:  // a valid request: the server must still answer those
                    batch += Array(#"{"op":"list","id":7}"#.utf8) + [0x0A]
                case 995..<998:  // over the line limit: an error, then a disconnect
                    batch += Array(repeating: UInt8(ascii: "x"), count: 70_000) + [0x0A]
                    closeAfter = true
                default:  // half a message, then gone
                    batch += Array(#"{"op":"li"#.utf8)
                    closeAfter = true
                }
                count += 1
                if closeAfter { break }
            }
            var offset = 0
            var lost = false
            while offset < batch.count {
                let written = batch[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    if written < 0 && errno == EAGAIN { lost = true; break }  // the server stopped reading us
                    lost = true
                    break
                }
                offset += written
            }
            sent += count
            tally.add(sent: count)
            // Drain replies until the server has nothing more for now.
            var errors = 0
            while !lost {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, closeAfter ? 1000 : 20) > 0 else { break }
                let got = read(fd, &buffer, buffer.count)
                if got <= 0 { lost = true; break }
                errors += countErrors(buffer[..<got])
            }
            tally.add(errorReplies: errors)
            if lost || closeAfter {
                close(fd)
                fd = -1
                tally.add(reconnects: 1)
            }
        }
        if fd >= 0 { close(fd) }
    }

    private func countErrors(_ bytes: ArraySlice<UInt8>) -> Int {
        // "ok":false appears once per error reply.
        let needle = Array(#""ok":false"#.utf8)
        var found = 0
        var index = bytes.startIndex
        while index + needle.count <= bytes.endIndex {
            if bytes[index] == needle[0], Array(bytes[index..<index + needle.count]) == needle {
                found += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        return found
    }
}
