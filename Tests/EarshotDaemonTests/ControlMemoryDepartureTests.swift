@testable import EarshotDaemon
import ControlProtocol
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 38: a client that leaves without reading its answers (crashed, impatient) takes what
/// it left queued with it. Counted exactly on an in-process server (`socketCounts`: connections
/// open and settling, the connection and session objects not yet freed, the bytes queued); the
/// daemon's memory is ControlMemoryTests.departingClients'.
@Suite("Control memory: clients that leave without reading", .timeLimit(.minutes(3)), .blockingCalls)
struct ControlMemoryDepartureTests {
    /// Nothing held, `accepted` connections taken from the backlog since the start.
    static func nothingHeld(accepted: Int) -> ControlWire.ControlSocketCounts {
        ControlWire.ControlSocketCounts(accepted: accepted, open: 0, settling: 0, connectionObjects: 0, sessionObjects: 0, unsentBytes: 0)
    }

    /// Whether `condition` holds by `timeout`, asked again each few milliseconds: a state of the
    /// server's own, which it announces nowhere else.
    static func eventually(timeout: Duration = .seconds(60), _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

    @Test("a client that sends a change, queries and another change, then leaves without reading: both changes are made, no query is answered, and nothing of it stays")
    func changesMadeQueriesDropped() async throws {
        try await ControlFixture.with { fixture in
            await fixture.control.holdChanges()
            let client = try RawControlSocket(path: fixture.socketPath)
            let register = { (name: String) in #"{"op":"register","accessory":"\#(name)","reporter":"org.example.gone","capabilities":[]}"# }
            try await client.send([
                register("node-a"), #"{"op":"status"}"#, #"{"op":"current","accessory":"node-a"}"#, #"{"op":"list"}"#, #"{"op":"nonsense"}"#,
                register("node-b"),
            ].joined(separator: "\n") + "\n")
            // The first change is being made (the session waits on it, the rest queued behind
            // it) when the client goes, as a process that exits does.
            await fixture.control.waitForHeldChange()
            client.shutdownBoth()
            #expect(await Self.eventually { fixture.server.connectionCount == 0 }, "its hang-up was never seen")
            #expect(fixture.server.socketCounts.settling == 1, "\(fixture.server.socketCounts)")
            await fixture.control.releaseChanges()
            #expect(await Self.eventually { fixture.server.socketCounts == Self.nothingHeld(accepted: 1) }, "\(fixture.server.socketCounts)")
            #expect(await fixture.control.performed.map { "\($0.verb) \($0.identity)" } == ["register node-a", "register node-b"])
            #expect(await fixture.control.statusCalls == 0, "a status was answered for a client that had gone")
        }
    }

    @Test("500 clients, 8 at a time, that send a status and close or shut down without reading: every connection, session and queued byte is freed")
    func burstLeavesNothing() async throws {
        try await ControlFixture.with { fixture in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        try await offPool {
                            for index in stride(from: lane, to: 500, by: 8) {
                                let fd = try UnixStreamSocket.connect(path: fixture.socketPath).releaseDescriptor()
                                defer { close(fd) }
                                let line = Array(#"{"op":"status"}"#.utf8) + [0x0A]
                                guard line.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
                                    throw FixtureError("send failed")
                                }
                                if index % 2 == 1 { shutdown(fd, Int32(SHUT_RDWR)) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Every one taken from the backlog, and gone.
            #expect(await Self.eventually { fixture.server.socketCounts == Self.nothingHeld(accepted: 500) }, "\(fixture.server.socketCounts)")
            // Some were answered (read before their hang-up was seen), most not.
            print("control memory, departed clients: \(await fixture.control.statusCalls) of 500 status requests answered")
            // The server still answers.
            let client = try RawControlSocket(path: fixture.socketPath)
            let reply = try await client.request(#"{"op":"status"}"#)
            #expect(reply["ok"] == .bool(true))
            guard case .object(let status)? = reply["status"], case .object(let diagnostics)? = status["diagnostics"] else {
                Issue.record("no diagnostics in \(reply)")
                return
            }
            // Its own connection and session, nothing else.
            #expect(diagnostics["control"] == .object([
                "accepted": .integer(501), "open": .integer(1), "settling": .integer(0), "connection-objects": .integer(1), "session-objects": .integer(1), "unsent-bytes": .integer(0),
            ]))
        }
    }
}
