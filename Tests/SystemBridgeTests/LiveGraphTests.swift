import AudioGraph
import Foundation
import SystemBridge
import PipeWireTestSupport
import TestScheduling
import Testing

/// The client against a real private PipeWire: objects, metadata, links, daemon death.
@Suite("Live graph", .timeLimit(.minutes(2)), .blockingCalls)
struct LiveGraphTests {
    @Test("sinks appear and disappear at runtime, with their properties")
    func sinksAppearAndDisappear() async throws {
        try await withSandbox { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            #expect(connection.snapshot().sinks.isEmpty)

            try await sandbox.createSink(.headphones())
            // The node comes before its ports: wait for both.
            let graph = try await connection.waitUntil("headphones and their ports") { graph in
                graph.node(named: "bluez_output.AA_BB_CC_DD_EE_FF.1").map { graph.ports(of: $0.id, direction: .input).count == 2 } ?? false
            }
            let sink = try #require(graph.node(named: "bluez_output.AA_BB_CC_DD_EE_FF.1"))
            #expect(sink.isAudioSink)
            #expect(graph.bluetoothAddress(of: sink) == "AA:BB:CC:DD:EE:FF")
            #expect(graph.formFactor(of: sink) == "headphone")
            #expect(graph.bus(of: sink) == "bluetooth")
            #expect(sink.serial != nil)
            #expect(graph.ports(of: sink.id, direction: .input).compactMap(\.channel) == ["FL", "FR"])

            try await sandbox.destroySink(named: "bluez_output.AA_BB_CC_DD_EE_FF.1")
            // The node's and its ports' removals are separate events, in an order PipeWire 1.4
            // does not fix (the node's may come first): wait for both.
            let after = try await connection.waitUntil("headphones and their ports gone") { graph in
                graph.sinks.isEmpty && graph.ports.values.allSatisfy { $0.nodeID != sink.id }
            }
            #expect(after.sinks.isEmpty)
        }
    }

    @Test("events replay into the same graph the connection holds")
    func eventsRebuildTheGraph() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            try await sandbox.createSink(.headphones())
            _ = try await connection.waitUntil("headphones") { $0.sinks.count == 2 }
            try await connection.sync()
            connection.close()
            var replayed = Graph()
            var sawReady = false
            for await batch in connection.events {
                for event in batch {
                    switch event {
                    case .changed(let change): replayed.apply(change)
                    case .ready(let graph): sawReady = true; #expect(graph.sinks.count == 1)
                    case .disconnected: Issue.record("unexpected disconnect")
                    case .notice(let notice): Issue.record("unexpected notice: \(notice)")
                    }
                }
            }
            #expect(sawReady)
            #expect(replayed == connection.snapshot())
        }
    }

    @Test("metadata writes are seen by pw-metadata and by WirePlumber (wpctl)")
    func metadataWrites() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
            try await connection.setMetadata(
                key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(headphones)"}"#)
            let graph = try await connection.waitUntil("WirePlumber follows the configured default") {
                $0.configuredDefaultSinkName == headphones && $0.effectiveDefaultSinkName == headphones
            }
            let id = try #require(graph.node(named: headphones)?.id)

            let metadata = try sandbox.run(["pw-metadata", "-n", "default", "0", Graph.configuredSinkKey])
            #expect(metadata.status == 0)
            #expect(metadata.output.contains(headphones))
            let status = try sandbox.run(["wpctl", "inspect", "@DEFAULT_AUDIO_SINK@"])
            #expect(status.output.contains("id \(id),"))

            try await connection.setMetadata(key: Graph.configuredSinkKey, value: nil)
            _ = try await connection.waitUntil("configured default removed") { $0.configuredDefaultSinkName == nil }
            let cleared = try sandbox.run(["pw-metadata", "-n", "default", "0", Graph.configuredSinkKey])
            #expect(!cleared.output.contains(headphones))
        }
    }

    // Streams get ports only once a session manager configures them, so these run with
    // WirePlumber, which links mpv to its default sink; the links made here go to the other.
    @Test("links from a playing stream to a sink are created and destroyed; the registry agrees")
    func linksFromAPlayingStream() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let (stream, other, wirePlumberLinks) = try await playerLinkedByWirePlumber(sandbox)
            // The observer saw the player's ports; this connection may not have yet.
            _ = try await connection.waitUntil("the player's ports") { !$0.portPairs(from: stream.id, to: other.id).isEmpty }

            let links = try await connection.link(output: stream.id, input: other.id)
            #expect(links.count == 2)
            let graph = try await sandbox.observer.waitUntil("both links in the registry") { graph in
                Set(graph.outgoingLinks(of: stream.id).filter { $0.inputNode == other.id }.map(\.id)) == Set(links)
            }
            let channels = links.compactMap { graph.links[$0] }.map { link in
                "\(graph.ports[link.outputPort]?.channel ?? "?")>\(graph.ports[link.inputPort]?.channel ?? "?")"
            }
            #expect(channels.sorted() == ["FL>FL", "FR>FR"])
            let listed = try sandbox.run(["pw-link", "-l", "-I"])
            for id in links { #expect(listed.output.contains("\(id) ")) }

            for id in links { try await connection.destroy(id) }
            let after = try await sandbox.observer.waitUntil("links gone") { graph in
                !graph.outgoingLinks(of: stream.id).contains { links.contains($0.id) }
            }
            #expect(Set(after.outgoingLinks(of: stream.id).map(\.id)) == wirePlumberLinks)
        }
    }

    @Test("owned links go with the connection unless they linger")
    func linkOwnership() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let (stream, other, _) = try await playerLinkedByWirePlumber(sandbox)
            let toOther: @Sendable (Graph) -> [Link] = { graph in
                graph.outgoingLinks(of: stream.id).filter { $0.inputNode == other.id }
            }
            let owner = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            _ = try await owner.link(output: stream.id, input: other.id)
            _ = try await sandbox.observer.waitUntil("linked") { toOther($0).count == 2 }
            owner.close()
            _ = try await sandbox.observer.waitUntil("links died with their owner") { toOther($0).isEmpty }

            let lingering = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            let kept = try await lingering.link(output: stream.id, input: other.id, linger: true)
            lingering.close()
            try await sandbox.observer.sync()
            let graph = try await sandbox.observer.waitUntil("lingering links") { Set(toOther($0).map(\.id)) == Set(kept) }
            #expect(toOther(graph).count == 2)
        }
    }

    /// Starts mpv, waits until WirePlumber has linked both channels, and returns the stream,
    /// the sink WirePlumber did not pick, and WirePlumber's links.
    private func playerLinkedByWirePlumber(_ sandbox: PipeWireSandbox) async throws -> (Node, Node, Set<ObjectID>) {
        let (_, stream) = try await sandbox.startPlayer()
        let graph = try await sandbox.observer.waitUntil("WirePlumber links both of mpv's channels") {
            $0.outgoingLinks(of: stream.id).count == 2
        }
        let chosen = try #require(graph.linkedTargets(of: stream.id).first)
        let other = try #require(graph.sinks.first { $0.id != chosen.id })
        return (stream, other, Set(graph.outgoingLinks(of: stream.id).map(\.id)))
    }

    /// The metadata comes from a connection that binds nothing, as the daemon's provider and a
    /// session manager's own: a connection that binds what it exports itself, on a second core
    /// of its own loop, saw its write's echo never come in about one run in twenty with both
    /// cores busy (issue 28; docs/reliability.md, "PipeWire's pending metadata bind").
    @Test("the default metadata can be created when none exists")
    func createDefaultMetadata() async throws {
        try await withSandbox { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let provider = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "provider", tracksGraph: false)
            defer { provider.close() }
            let id = try await provider.createMetadata(named: "earshot-test")
            let graph = try await connection.waitUntil("metadata bound") { $0.metadata[id]?.name == "earshot-test" }
            #expect(graph.metadata[id] != nil)
            try await connection.setMetadata("earshot-test", key: "k", value: "v")
            // What PipeWire holds, seen by a binding made after the write. (The writer's own
            // echo is lost in about one run in seventy with both cores busy, on 0.3.65: the
            // value is there for a fresh binding, never for the writer, even 20 s later —
            // docs/reliability.md, "Open". Checked here by what the object holds.)
            let reader = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "reader")
            defer { reader.close() }
            _ = try await reader.waitUntil("the value in the object") { $0.metadata[id]?[0, "k"]?.value == "v" }
        }
    }

    /// Seen live: Earshot's own metadata had the lower id, so a write meant for the session
    /// manager's went into Earshot's, which was withdrawn a moment later, and was lost.
    @Test("with Earshot's provided metadata and another client's of the same name, writes go to the other's, also once Earshot's is withdrawn")
    func writesGoToTheOtherClientsMetadata() async throws {
        try await withSandbox { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            try await connection.provideMetadata(named: "earshot-test")
            let ours = try #require(connection.providedMetadataIDs(named: "earshot-test").first)
            // A session manager's own metadata, from a connection that binds nothing (see
            // createDefaultMetadata).
            let other = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "session manager", tracksGraph: false)
            defer { other.close() }
            let theirs = try await other.createMetadata(named: "earshot-test")
            #expect(ours < theirs, "the provided object is the older one, as in a hand-over")
            _ = try await connection.waitUntil("both bound") { $0.metadata[ours] != nil && $0.metadata[theirs] != nil }
            try await connection.setMetadata("earshot-test", key: "k", value: "1")
            // What the objects hold, seen by a binding made after the write (the writer's own
            // echo can be lost under load: see createDefaultMetadata).
            let reader = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "reader")
            defer { reader.close() }
            _ = try await reader.waitUntil("written to the other's") { $0.metadata[theirs]?[0, "k"]?.value == "1" }
            #expect(reader.snapshot().metadata[ours]?[0, "k"] == nil)
            // Withdrawn and not yet removed from the registry: still not the one to write to.
            #expect(await connection.withdrawProvidedMetadata(named: "earshot-test"))
            try await connection.setMetadata("earshot-test", key: "k", value: "2")
            let again = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "reader again")
            defer { again.close() }
            _ = try await again.waitUntil("written to the other's again") { $0.metadata[theirs]?[0, "k"]?.value == "2" }
        }
    }

    @Test("killing the daemon is reported, and the client can connect again")
    func daemonDeath() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            try sandbox.killPipeWire()
            var reported: PipeWireError?
            for await batch in connection.events {
                for case .disconnected(let error) in batch { reported = error }
            }
            #expect(reported != nil)
            await #expect(throws: PipeWireError.self) { try await connection.sync() }
            await #expect(throws: PipeWireError.self) {
                _ = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            }

            try await sandbox.restartPipeWire()
            let again = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { again.close() }
            try await again.sync()
            #expect(again.snapshot().defaultMetadata != nil)
        }
    }

    @Test("a live snapshot equals pw-dump's view of the same daemon")
    func liveEqualsPwDump() async throws {
        try await withSandbox(.init(sinks: [.speakers(), .headphones()])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            try await connection.sync()
            let live = connection.snapshot()
            let dump = try sandbox.run(["pw-dump"])
            #expect(dump.status == 0)
            let dumped = try PwDumpDecoder.decode(Data(dump.output.utf8), source: "pw-dump")
            let (a, b) = (live.canonicalized(), dumped.canonicalized())
            #expect(a.nodes == b.nodes)
            #expect(a.ports == b.ports)
            #expect(a.links == b.links)
            #expect(a.devices == b.devices)
            // pw-dump leaves out metadata objects that hold no keys yet.
            #expect(a.metadata.filter { !$0.value.entries.isEmpty } == b.metadata)
            #expect(b.metadata.keys.allSatisfy { a.metadata[$0] != nil })
            // pw-dump's own client connected after the snapshot; every other client matches.
            let pwDumpClients = Set(b.clients.filter { $0.value.props["application.name"] == "pw-dump" }.keys)
            #expect(a.clients == b.clients.filter { !pwDumpClients.contains($0.key) })
        }
    }
}
