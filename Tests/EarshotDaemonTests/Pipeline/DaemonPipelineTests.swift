import ControlProtocol
import WireFields
import AudioGraph
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// The daemon's one input path over a fake PipeWire and a test clock: what it writes, links,
/// pauses and resumes, in which order, for which inputs. No PipeWire process; the bridge and
/// the end-to-end behaviour are tested against real ones elsewhere.
@Suite("Daemon pipeline", .blockingCalls)
struct DaemonPipelineTests {
    typealias H = DaemonHarness

    @Test("cooperative: a worn headset is written once; its echo is not a user pick; a user's pick is followed, not fought")
    func cooperativeEchoAndOverride() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        #expect(h.log.all.isEmpty, "speakers are the default already: nothing to write")
        #expect(await h.decision?.reason == .initial)

        _ = await h.place("on-head", register: true)
        #expect(h.log.all == ["set default.configured.audio.sink=\(H.headphones)"])

        await h.changes(H.defaultWritten(H.headphones))  // WirePlumber's echo of our write
        #expect(await h.decision?.trigger != .userSelected(H.headphones))
        #expect(await h.daemon.status().decisionRecord?.default == H.headphones)

        await h.changes(H.defaultWritten(H.speakers))  // wpctl set-default speakers
        let decision = await h.decision
        #expect(decision?.reason == .userOverride)
        #expect(decision?.defaultSink == H.speakers)
        #expect(h.log.all.count == 1, "the user's pick is not written back: \(h.log.all)")
        await h.stop()
    }

    @Test("a decision back to the old default, made before the echo of Earshot's write arrives, is still written")
    func decisionBeforeEcho() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        // No echo yet: the graph still says speakers, but headphones are on their way.
        _ = await h.daemon.perform(.unregister(AccessoryIdentity(parsing: H.address)!))
        #expect(h.log.all == [
            "set default.configured.audio.sink=\(H.headphones)", "set default.configured.audio.sink=\(H.speakers)",
        ])
        await h.echo()
        #expect(await h.decision?.defaultSink == H.speakers)
        #expect(await h.decision?.reason != .userOverride, "both echoes are Earshot's own")
        await h.stop()
    }

    @Test("off-grace: coming off switches only when the clock passes the grace, on the timer input")
    func offGraceTimer() async throws {
        let h = try await H(config: "[timing]\noff-grace-ms = 400\n")
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.changes(H.defaultWritten(H.headphones))
        let events = await h.daemon.subscribe()
        _ = await h.place("off-head")
        #expect(h.log.all == ["set default.configured.audio.sink=\(H.headphones)"], "inside the grace nothing moves")
        h.clock.advance(by: 399)
        #expect(await h.daemon.status().decisionRecord?.default == H.headphones)
        h.clock.advance(by: 1)
        var iterator = events.makeAsyncIterator()
        var change: ControlWire.RouteChangeEvent?
        while change == nil, let event = await iterator.next() {
            if case .routeChange(let routeChange) = event { change = routeChange }
        }
        #expect(change?.reason == .placementChanged)
        #expect(change?.current == H.speakers)
        await h.settle()  // the route change is published before it is applied
        #expect(h.log.all.last == "set default.configured.audio.sink=\(H.speakers)")
        await h.stop()
    }

    @Test("standalone: streams are linked to the default, then moved make before break; the links are the connection's")
    func standaloneRelink() async throws {
        let h = try await H()
        var graph = H.graph(sessionManager: false)
        graph.apply(.removed(H.metadataID))  // nobody provides the default metadata
        await h.connect(graph)
        // Headphones rank above speakers by class: the stream goes there.
        #expect(h.log.all == [
            "create default metadata",
            "set default.configured.audio.sink=\(H.headphones)", "set default.audio.sink=\(H.headphones)",
            "link \(H.streamID)→43",
        ])
        await h.changes(.metadata(Metadata(id: H.metadataID, props: ["metadata.name": "default"])))
        await h.echo()
        let first = try #require(h.pipewire.ownedLinks()[H.streamID]?.keys.first)

        _ = await h.place("off-head", register: true)
        #expect(h.log.all.suffix(3) == [
            "set default.configured.audio.sink=\(H.speakers)", "set default.audio.sink=\(H.speakers)",
            "link \(H.streamID)→40 unlink \(first)",
        ])
        #expect(h.pipewire.ownedLinks()[H.streamID]?.values.sorted() == [40])
        await h.echo()
        // An input with nothing to change (a port of another node) does nothing more.
        let before = h.log.all.count
        await h.changes(.port(Port(id: 62, direction: .output, props: ["node.id": "99"])))
        #expect(h.log.all.count == before, "\(h.log.all.suffix(2))")
        await h.stop()
    }

    @Test("one input at a time: a slow MPRIS pause holds a control request and a timer until its own effects are done")
    func slowPauseSerializesInputs() async throws {
        let h = try await H(config: "[timing]\noff-grace-ms = 400\non-delay-ms = 100\n")
        var events = await h.daemon.subscribe().makeAsyncIterator()
        await h.connect(H.graph(sessionManager: true, playingOn: H.headphones))
        _ = await h.place("on-head", register: true)  // on-delay: takes the output at the timer
        h.clock.advance(by: 100)
        #expect(await Self.next(&events, H.headphones) == .placementChanged)
        await h.changes(H.defaultWritten(H.headphones))
        #expect(h.log.all == ["set default.configured.audio.sink=\(H.headphones)"])

        // Off the head: after the grace the output moves to the speakers and the player is
        // paused, by a player that takes its time.
        h.players.holdPauses()
        _ = await h.place("off-head")
        h.clock.advance(by: 400)
        await h.players.pauseHasStarted()

        // Meanwhile: the headset goes back on (a control request) and time passes.
        let request = Task { await h.place("on-head") }
        await h.daemon.inputs.waitUntilWaiting(1)
        h.clock.advance(by: 1000)
        #expect(h.log.all.suffix(1) == ["pause begin"], "nothing else may run while the pause is in flight")
        #expect(await h.daemon.current(AccessoryIdentity(parsing: H.address)!).map(\.placement) == .success(.offHead))

        h.players.releasePauses()
        #expect(await Self.next(&events, H.speakers) == .placementChanged)
        #expect((try? await request.value.get()) != nil)
        // The request's on-delay, armed when the request was handled, passes.
        h.clock.advance(by: 100)
        #expect(await Self.next(&events, H.headphones) == .placementChanged)
        #expect(await Self.nextPlayback(&events) == .resumed)
        #expect(Array(h.log.all.dropFirst()) == [
            "pause begin", "pause end", "set default.configured.audio.sink=\(H.speakers)",
            "set default.configured.audio.sink=\(H.headphones)", "resume org.mpris.MediaPlayer2.fake",
        ])
        await h.stop()
    }

    /// The reason of the next route change to `sink` (earlier events are skipped).
    static func next(_ events: inout AsyncStream<ControlWire.Event>.Iterator, _ sink: String) async -> RouteChangeReason? {
        while let event = await events.next() {
            if case .routeChange(let change) = event, change.current == sink { return change.reason.known }
        }
        return nil
    }

    static func nextPlayback(_ events: inout AsyncStream<ControlWire.Event>.Iterator) async -> ControlWire.PlaybackEvent.Action? {
        while let event = await events.next() {
            if case .playback(let change) = event, change.action == .resumed { return change.action.known }
        }
        return nil
    }
}
