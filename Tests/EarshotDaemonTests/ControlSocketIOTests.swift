import EarshotDaemon
import Foundation
import SystemBridge
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's own I/O (dispatch sources on one queue, no SwiftNIO): half-closed and
/// vanished peers, reads held back and resumed, and a daemon out of descriptors.
@Suite("control socket I/O")
struct ControlSocketIOTests {
    static let status = #"{"id":1,"op":"status"}"#

    @Test("a client that shuts its sending side after three requests gets three answers, then the close")
    func halfClosed() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            try await client.send(String(repeating: Self.status + "\n", count: 3))
            client.shutdownWrite()
            for _ in 0..<3 { #expect(try await client.readJSON()["ok"] == .bool(true)) }
            try await client.waitForClose()
        }
    }

    @Test("a client that pipelines past the queued-request bound is read again once answered: every request answered, in order")
    func heldReadingResumes() async throws {
        try await ControlFixture.with(limits: ControlLimits(maximumQueuedRequests: 2)) { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let count = 200
            try await client.send((1...count).map { #"{"id":\#($0),"op":"status"}"# + "\n" }.joined())
            for id in 1...count {
                let reply = try await client.readJSON()
                #expect(reply["id"] == .integer(Int64(id)))
            }
        }
    }

    @Test("a line split byte by byte over many writes is one request; a partial line at the end of the input is dropped")
    func bytewise() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            for byte in Array((Self.status + "\n").utf8) { try await client.send([byte]) }
            #expect(try await client.readJSON()["ok"] == .bool(true))
            try await client.send(#"{"id":2,"op":"sta"#)
            client.shutdownWrite()
            try await client.waitForClose()
        }
    }

    #if DEBUG
    @Test("out of descriptors (EMFILE at every accept): the server waits for a connection to close before it tries again (never spins on the listener), and the waiting client is answered once a descriptor is free")
    func outOfDescriptors() async throws {
        try await ControlFixture.with { fixture in
            let first = try RawControlSocket(path: fixture.socketPath)
            let second = try RawControlSocket(path: fixture.socketPath)
            #expect(try await first.request(Self.status)["ok"] == .bool(true))
            #expect(try await second.request(Self.status)["ok"] == .bool(true))
            let fault = FaultInjection.inject(.tooManyOpenFiles, into: "accept", onPathsContaining: fixture.socketPath)
            defer { FaultInjection.remove(fault) }
            let waiting = try RawControlSocket(path: fixture.socketPath)
            try await waiting.send(Self.status + "\n")
            #expect(await FaultInjection.used(fault, times: 1, within: .seconds(30)), "the server never tried to accept")
            // One connection closes: one more try, which fails too; then it waits again.
            first.shutdownBoth()
            #expect(await FaultInjection.used(fault, times: 2, within: .seconds(30)), "a closed connection did not make the server try again")
            FaultInjection.remove(fault)
            // The waiting client's request before a descriptor is freed: if the server spun on
            // the listener, the fault's count would have run far past 2 by now.
            #expect(FaultInjection.uses(of: fault) == 2)
            second.shutdownBoth()
            #expect(try await waiting.readJSON()["ok"] == .bool(true))
        }
    }
    #endif
}

extension FaultInjection {
    /// `used`, with a deadline: false when the fault was not used `times` in time (it is
    /// removed then).
    static func used(_ fault: Token, times: Int, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await used(fault, times: times)
                return uses(of: fault) >= times
            }
            group.addTask {
                // At the deadline the fault goes, which answers the wait above.
                guard (try? await Task.sleep(for: limit)) != nil else { return false }
                remove(fault)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
