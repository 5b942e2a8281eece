import WireFields
import AudioGraph
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The session manager leaving and coming back, over the fake PipeWire: what Earshot does with
/// the metadata it provided, with the values the session manager writes as it starts, and with
/// the streams it linked. (Against real WirePlumber 0.4 and 0.5: SessionManagerHandOverTests.)
@Suite("Session manager hand-over (pipeline)", .blockingCalls)
struct SessionManagerHandOverUnitTests {
    typealias H = DaemonHarness
    static let wirePlumber = Client(id: 20, props: ["application.process.binary": "wireplumber", "wireplumber.daemon": "true", "object.serial": "520"])
    static let ourMetadata = Metadata(id: FakePipeWire.createdMetadataID, props: ["metadata.name": "default"])

    /// WirePlumber dies; Earshot creates its metadata and its echo arrives.
    static func takeOver(_ h: H) async {
        await h.changes(.removed(H.metadataID), .removed(20))
        #expect(await h.daemon.status().mode == .standalone)
        #expect(h.log.all.contains("create default metadata"))
        await h.changes(.metadata(ourMetadata))
        await h.echo()
    }

    /// WirePlumber dies and comes back with a `default` metadata (77) of its own; Earshot's goes.
    static func returnsWithItsOwnMetadata(_ h: H) async {
        await takeOver(h)
        await h.changes(.client(wirePlumber), .metadata(Metadata(id: 77, props: ["metadata.name": "default"])))
        await h.changes(.removed(FakePipeWire.createdMetadataID))
    }

    /// The configured default in WirePlumber's metadata (77), as PipeWire reports a write.
    static func configured(_ name: String) -> GraphChange {
        .metadataProperty(metadata: 77, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: name))
    }

    @Test("a session manager that adopts Earshot's metadata keeps it; one that brings its own gets the field")
    func metadataHandBack() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        await Self.takeOver(h)
        // WirePlumber returns and uses the metadata it finds (Earshot's): nothing is removed.
        await h.changes(.client(Self.wirePlumber))
        #expect(await h.daemon.status().mode == .cooperative)
        #expect(!h.log.all.contains("remove default metadata"))
        // Its own shows up: Earshot's goes, and the decision is written to the new one.
        let before = h.log.all.count
        await h.changes(.metadata(Metadata(id: 77, props: ["metadata.name": "default"])))
        #expect(Array(h.log.all.dropFirst(before)) == ["remove default metadata", "set default.configured.audio.sink=\(H.speakers)"])
        await h.stop()
    }

    @Test("what a returning session manager writes as it starts is not a user's pick; then Earshot's decision is written to it")
    func startUpValuesAreNotPicks() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.echo()
        await Self.takeOver(h)
        await h.changes(.client(Self.wirePlumber), .metadata(Metadata(id: 77, props: ["metadata.name": "default"])))
        await h.changes(.removed(FakePipeWire.createdMetadataID))
        // WirePlumber restores the speakers from its own state.
        await h.changes(.metadataProperty(
            metadata: 77, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: H.speakers)))
        let decision = await h.daemon.decisions.last
        #expect(decision?.reason != .userOverride)
        #expect(await h.daemon.status().decisionRecord?.default == H.headphones)
        #expect(h.log.all.last == "set default.configured.audio.sink=\(H.headphones)")
        await h.stop()
    }

    @Test("a session manager's metadata appearing after Earshot settled: its restored value is not a user's pick")
    func lateSessionManagerMetadata() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        await Self.takeOver(h)
        await h.changes(.client(Self.wirePlumber))  // adopts Earshot's metadata
        await h.changes(.metadata(Metadata(id: 79, props: ["metadata.name": "default"])))  // then makes its own after all
        await h.changes(.metadataProperty(
            metadata: 79, subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: H.headphones)))
        #expect(await h.daemon.decisions.last?.reason != .userOverride)
        #expect(await h.daemon.status().decisionRecord?.default == H.speakers)
        await h.stop()
    }

    @Test("a write into metadata that then goes is forgotten: the next metadata gets the decision")
    func writesIntoRemovedMetadataAreForgotten() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)  // written, not yet echoed
        await h.changes(.removed(H.metadataID))  // WirePlumber's metadata goes with it
        await h.changes(.metadata(Metadata(id: 78, props: ["metadata.name": "default"])))
        #expect(h.log.all.filter { $0 == "set default.configured.audio.sink=\(H.headphones)" }.count == 2)
        await h.stop()
    }
    /// Seen live (WirePlumber 0.4, one hand-over in three): the echo of Earshot's write came
    /// while the session manager was still settling and stayed in flight, so the settling
    /// never ended and every later value, a user's pick too, was taken for start-up.
    @Test("the echo of the decision written while a returning session manager settles ends the settling: a later pick is the user's")
    func echoWhileSettlingEndsTheSettling() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.echo()
        await Self.returnsWithItsOwnMetadata(h)
        #expect(h.log.all.last == "set default.configured.audio.sink=\(H.headphones)")
        _ = h.pipewire.takeEchoes()
        await h.changes(Self.configured(H.headphones))
        // Past the session manager's start-up window, a value Earshot did not write is a pick.
        h.clock.advance(by: DefaultSinkWriter.startUpWindow)
        await h.changes(Self.configured(H.speakers))
        #expect(await h.daemon.decisions.last?.reason == .userOverride)
        #expect(await h.daemon.status().decisionRecord?.default == H.speakers)
        await h.stop()
    }

    /// Seen on WirePlumber 0.5 in a loaded run: it restored the configured default from its
    /// state a moment after Earshot's write had echoed, and Earshot took it for a user's pick.
    @Test("a value the returning session manager restores after Earshot's echo, within its start-up window, is not a pick: the decision is written again")
    func lateRestoreIsNotAPick() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.echo()
        _ = await h.place("off-head")
        h.clock.advance(by: 1_000)  // the off-grace: the speakers are the decision
        await h.settle()
        await h.echo()
        await Self.returnsWithItsOwnMetadata(h)
        _ = h.pipewire.takeEchoes()
        await h.changes(Self.configured(H.speakers))  // the echo of Earshot's write
        h.clock.advance(by: 500)
        let before = h.log.all.count
        await h.changes(Self.configured(H.headphones))  // WirePlumber's restore, late
        #expect(await h.daemon.decisions.last?.reason != .userOverride)
        #expect(await h.daemon.status().decisionRecord?.default == H.speakers)
        #expect(Array(h.log.all.dropFirst(before)).contains("set default.configured.audio.sink=\(H.speakers)"))
        await h.stop()
    }

    static let wirePlumber05 = Client(id: 20, props: [
        "application.process.binary": "wireplumber", "wireplumber.daemon": "true", "application.version": "0.5.8", "object.serial": "520",
    ])

    /// Earshot takes over and links the stream; WirePlumber 0.5 returns with its metadata,
    /// whose value is Earshot's decision: the stream is handed back.
    static func handBackToWirePlumber05(_ h: H) async {
        await h.connect(H.graph(sessionManager: true))
        await takeOver(h)
        #expect(h.pipewire.ownedLinks()[H.streamID]?.values.sorted() == [40], "standalone: Earshot links the stream")
        await h.changes(.client(wirePlumber05), .metadata(Metadata(id: 77, props: ["metadata.name": "default"])))
        await h.changes(.removed(FakePipeWire.createdMetadataID))
        _ = h.pipewire.takeEchoes()
        await h.changes(configured(H.speakers))
    }

    /// Seen on WirePlumber 0.5.8 at a load average of 20 (hunt run 39): it came back, Earshot
    /// freed the stream it had linked, and WirePlumber never linked it: silence for good.
    @Test("a stream handed back to WirePlumber 0.5 and still unlinked after the grace is linked by Earshot again, and kept until the session manager links it")
    func unlinkedAfterHandBack() async throws {
        let h = try await H()
        await Self.handBackToWirePlumber05(h)
        #expect(h.pipewire.ownedLinks()[H.streamID]?.isEmpty ?? true, "handed back: Earshot's links went")
        let handedBack = await h.daemon.applyDeadline
        #expect(handedBack != nil, "the daemon looks again when the grace ends")

        // Within the grace nothing happens; past it, with WirePlumber still silent, Earshot links.
        h.clock.advance(by: StandaloneApplier.handBackGrace - 1)
        _ = await h.daemon.submit(.timerFired)
        #expect(h.pipewire.ownedLinks()[H.streamID]?.isEmpty ?? true)
        h.clock.advance(by: 1)
        _ = await h.daemon.submit(.timerFired)
        #expect(h.pipewire.ownedLinks()[H.streamID]?.values.sorted() == [40], "linked again to the default")
        #expect(await h.daemon.applyDeadline == nil)

        // Kept: later turns do not free it again (WirePlumber 0.5 would not link a linked stream).
        let before = h.log.all.count
        await h.changes(.client(Client(id: 22, props: ["object.serial": "522"])))
        #expect(!h.log.all.dropFirst(before).contains { $0.hasPrefix("destroy") })
        // WirePlumber links it after all: the stream is its own, Earshot's link goes.
        let ours = try #require(h.pipewire.ownedLinks()[H.streamID]?.keys.first)
        await h.changes(.link(Link(id: 95, outputNode: H.streamID, outputPort: 61, inputNode: 40, inputPort: 41, props: ["object.serial": "595"])))
        #expect(h.log.all.dropFirst(before).contains("destroy \(ours)"))
        await h.stop()
    }

    @Test("a stream WirePlumber 0.5 links within the grace stays its own: Earshot links nothing")
    func linkedWithinTheGrace() async throws {
        let h = try await H()
        await Self.handBackToWirePlumber05(h)
        await h.changes(.link(Link(id: 95, outputNode: H.streamID, outputPort: 61, inputNode: 40, inputPort: 41, props: ["object.serial": "595"])))
        let before = h.log.all.count
        h.clock.advance(by: StandaloneApplier.handBackGrace)
        _ = await h.daemon.submit(.timerFired)
        #expect(!h.log.all.dropFirst(before).contains { $0.hasPrefix("link") })
        #expect(await h.daemon.applyDeadline == nil)
        await h.stop()
    }
}
