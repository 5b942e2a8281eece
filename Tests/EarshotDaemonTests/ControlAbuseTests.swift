import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import Testing

/// Clients that would stall a naive server: one that never reads, one of another user.
@Suite("control abuse", .timeLimit(.minutes(2)))
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
                let reply = try await prompt.request(#"{"op":"status"}"#, timeout: .seconds(5))
                slowest = max(slowest, ContinuousClock.now - started)
                #expect(reply["ok"] == .bool(true))
            }
            #expect(fixture.server.connectionCount == 1, "the slow subscriber is still connected after \(emitted) events")
            #expect(slowest < .seconds(2), "a status request took \(slowest) while the slow subscriber was being fed")
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
