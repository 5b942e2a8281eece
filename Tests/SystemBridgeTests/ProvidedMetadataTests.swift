import AudioGraph
import Glibc
import PipeWireTestSupport
import TestScheduling
import Testing

@testable import SystemBridge

/// The connection that provides Earshot's `default` metadata only provides it.
@Suite("Provided metadata", .blockingCalls)
struct ProvidedMetadataTests {
    /// PipeWire 0.3.65's metadata module counts a bind as pending until the exporter answers a
    /// ping, and forgets to uncount a binder that goes first: from then on it forwards none of
    /// that object's changes to anyone. The provider used to bind every global and was closed
    /// right after a returning WirePlumber's metadata appeared: every later write to
    /// WirePlumber's metadata looked lost (SessionManagerHandOverTests failed one run in three).
    @Test("the providing connection binds nothing (no registry), so its going can never leave a bind pending")
    func providerBindsNothing() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let other = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "session manager")
            defer { other.close() }
            _ = try await other.createMetadata(named: "default")
            try await connection.provideMetadata(named: "default")
            let provider = try #require(connection.loop.withLock { connection.providers["default"]?.connection })
            let bound = provider.loop.withLock { provider.boundObjects.count }
            #expect(bound == 0)
            #expect(provider.snapshot().metadata.isEmpty && provider.snapshot().nodes.isEmpty)
            #expect(connection.snapshot().nodes.count >= 1, "the main connection still tracks the graph")
        }
    }
    /// What a client stuck "busy" by PipeWire sees: round trips never answered. Stopping the
    /// daemon gives the same view.
    @Test("a round trip that gets no answer ends the connection, reported as a disconnection")
    func unansweredRoundTripEndsTheConnection() async throws {
        try await withSandbox { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let daemon = try #require(sandbox.pipewireProcess)
            daemon.signal(SIGSTOP)
            defer { daemon.signal(SIGCONT) }
            await #expect(throws: PipeWireError.self) { try await connection.sync(timeout: .milliseconds(300)) }
            var reported: PipeWireError?
            for await batch in connection.events {
                for case .disconnected(let error) in batch { reported = error }
            }
            #expect(reported.map { "\($0)" }?.contains("stopped answering") == true)
            await #expect(throws: PipeWireError.self) { try await connection.sync() }
        }
    }
}
