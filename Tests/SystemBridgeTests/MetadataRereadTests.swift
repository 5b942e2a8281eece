import AudioGraph
import PipeWireTestSupport
import TestScheduling
import Testing

@testable import SystemBridge

/// Issue 28's last failure kind, found: PipeWire's metadata module passes an exporter's property
/// events only to the bindings still waiting for their first properties while any bind of that
/// metadata is pending (`module-metadata/metadata.c`, `metadata_property`), so a change made then
/// never reaches a binding already settled. `rereadMetadata` reads the object afresh.
@Suite("Metadata read afresh", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct MetadataRereadTests {
    @Test("a write that races a bind of the metadata is lost to every settled binding; a reread puts it right, and one with nothing missed changes nothing")
    func rereadRecoversALostChange() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            let exporter = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "session manager")
            defer { exporter.close() }
            let id = try await exporter.createMetadata(named: "earshot-test")
            let writer = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "writer")
            defer { writer.close() }
            let settled = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "settled")
            defer { settled.close() }
            for connection in [writer, settled] {
                _ = try await connection.waitUntil("the metadata bound", timeout: .seconds(20)) { $0.metadata[id] != nil }
                try await connection.sync()
            }
            // One flush: the write, then a second bind. PipeWire forwards the write to the
            // exporter and counts the bind pending before the exporter's answer can come back.
            let reread = try writer.loop.withLock { () throws(PipeWireError) -> MetadataReread? in
                _ = try writer.writeMetadata("earshot-test", subject: 0, key: "earshot.test", type: nil, value: "lost")
                return try writer.beginReread(id: id)
            }
            let corrected = try await writer.finishReread(try #require(reread), timeout: .seconds(30))
            try await settled.sync()
            try await exporter.sync()
            // The module's behaviour (0.3.65 and 1.4.2 alike): the settled binding never heard.
            #expect(settled.snapshot().metadata[id]?[0, "earshot.test"] == nil, "PipeWire passed the change on after all")
            // The writer's own settled binding missed it too; the reread put it right.
            #expect(corrected == 1)
            #expect(writer.snapshot().metadata[id]?[0, "earshot.test"]?.value == "lost")
            // Nothing missed: nothing changes.
            #expect(try await writer.rereadMetadata(id: id) == 0)
            // A reread of the settled connection puts it right there too.
            #expect(try await settled.rereadMetadata(id: id) == 1)
            #expect(settled.snapshot().metadata[id]?[0, "earshot.test"]?.value == "lost")
            // The connections go on seeing the graph: a new client shows up in both.
            let newcomer = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "newcomer")
            defer { newcomer.close() }
            for connection in [writer, settled] {
                _ = try await connection.waitUntil("the newcomer", timeout: .seconds(10)) { graph in
                    graph.clients.values.contains { $0.props["application.name"] == "newcomer" }
                }
            }
        }
    }
}

@Suite("Metadata read afresh, WirePlumber's", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct MetadataRereadWirePlumberTests {
    @Test("WirePlumber's default metadata: a pick racing a bind is lost to a settled binding and read afresh; the connection goes on seeing the graph")
    func rereadOfWirePlumbersMetadata() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "reader")
            defer { connection.close() }
            let graph = try await connection.waitUntil("the default metadata", timeout: .seconds(20)) { $0.defaultMetadata != nil }
            let id = try #require(graph.defaultMetadata?.id)
            try await connection.sync()
            // WirePlumber may still be writing its own keys: whatever this finds is put right.
            _ = try await connection.rereadMetadata(id: id)
            try await connection.sync()
            let picker = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "picker")
            _ = try await picker.waitUntil("the default metadata", timeout: .seconds(20)) { $0.defaultMetadata?.id == id }
            try await picker.sync()
            let reread = try picker.loop.withLock { () throws(PipeWireError) -> MetadataReread? in
                _ = try picker.writeMetadata("default", subject: 0, key: "default.configured.audio.sink", type: "Spa:String:JSON", value: "{\"name\":\"alsa_output.sandbox.analog-stereo\"}")
                return try picker.beginReread(id: id)
            }
            _ = try await picker.finishReread(try #require(reread), timeout: .seconds(30))
            _ = try await connection.waitUntil("the picker", timeout: .seconds(10)) { graph in
                graph.clients.values.contains { $0.props["application.name"] == "picker" }
            }
            picker.close()
            _ = try await connection.waitUntil("the picker gone", timeout: .seconds(10)) { graph in
                !graph.clients.values.contains { $0.props["application.name"] == "picker" }
            }
            try await connection.sync()
            #expect(connection.snapshot().configuredDefaultSinkName == nil, "lost")
            #expect(try await connection.rereadMetadata(id: id) >= 1)
            #expect(connection.snapshot().configuredDefaultSinkName == "alsa_output.sandbox.analog-stereo")
            let newcomer = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "newcomer")
            defer { newcomer.close() }
            _ = try await connection.waitUntil("the newcomer", timeout: .seconds(10)) { graph in
                graph.clients.values.contains { $0.props["application.name"] == "newcomer" }
            }
        }
    }
}
