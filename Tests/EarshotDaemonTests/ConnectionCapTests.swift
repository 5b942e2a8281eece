import EarshotDaemon
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 21: ≈ 1000 idle connections exhausted the daemon's descriptors and every client hung.
/// The connections are capped below the limit; the oldest idle one makes room for a new client;
/// a client never waits for ever to connect.
@Suite("connection cap", .blockingCalls)
struct ConnectionCapTests {
    @Test("at the cap the oldest idle connection is closed for a new one, which is answered; a subscribed one is not idle")
    func oldestIdleGoes() async throws {
        try await ControlFixture.with(limits: ControlLimits(maximumConnections: 4)) { fixture in
            let subscriber = try RawControlSocket(path: fixture.socketPath)
            #expect(try await subscriber.request(#"{"id":1,"op":"subscribe"}"#)["ok"] == .bool(true))
            var idle: [RawControlSocket] = []
            for _ in 0..<3 {
                let socket = try RawControlSocket(path: fixture.socketPath)
                // A round trip: admitted, and idle again.
                #expect(try await socket.request(#"{"id":1,"op":"status"}"#)["ok"] == .bool(true))
                idle.append(socket)
            }
            let newcomer = try RawControlSocket(path: fixture.socketPath)
            #expect(try await newcomer.request(#"{"id":2,"op":"status"}"#)["ok"] == .bool(true))
            // The oldest idle one (the first of the three) went; the subscriber stays. The close
            // goes through the shared event loop: under a full suite it can take seconds.
            try await idle[0].waitForClose(timeout: .seconds(30))
            #expect(try await idle[1].request(#"{"id":3,"op":"status"}"#)["ok"] == .bool(true))
            #expect(fixture.server.connectionCount <= 4)
        }
    }

    @Test("a listener that never accepts: the connect gives up after its timeout instead of hanging")
    func connectTimeout() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-backlog-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("sock").path
        let listener = try UnixListenerForTests(path: path, backlog: 0)
        defer { listener.close() }
        // Fill the backlog (never accepted), then one more connect must time out.
        var held: [UnixStreamSocket] = []
        var timedOut = false
        let start = ContinuousClock.now
        for _ in 0..<64 {
            do {
                held.append(try UnixStreamSocket.connect(path: path, timeout: .milliseconds(300)))
            } catch {
                timedOut = error.errno == .resourceTemporarilyUnavailable
                break
            }
        }
        #expect(timedOut, "a connect to a full backlog did not time out")
        #expect(ContinuousClock.now - start < .seconds(20))
        _ = held
    }
}

/// A Unix stream socket listening at `path` that never accepts (a wedged daemon).
struct UnixListenerForTests {
    let fd: Int32

    init(path: String, backlog: Int32) throws {
        fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else { throw FixtureError("bind/listen failed") }
    }

    func close() { _ = Glibc.close(fd) }
}
