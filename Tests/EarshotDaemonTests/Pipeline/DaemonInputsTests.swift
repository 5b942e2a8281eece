import ControlProtocol
import WireFields
import AudioGraph
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

@testable import EarshotDaemon

/// Each kind of input through the daemon's one path, over a fake PipeWire: what it decides,
/// writes, pauses, saves and tells subscribers.
@Suite("Daemon inputs", .blockingCalls)
struct DaemonInputsTests {
    typealias H = DaemonHarness
    static let identity = AccessoryIdentity(parsing: H.address)!

    @Test("the headphones' sink going away pauses the player on it before the default moves, and says so")
    func sinkRemovedPauses() async throws {
        let h = try await H()
        var events = await h.daemon.subscribe().makeAsyncIterator()
        await h.connect(H.graph(sessionManager: true, playingOn: H.headphones))
        _ = await h.place("on-head", register: true)
        await h.echo()
        await h.changes(.removed(70), .removed(43))  // the link, then the sink
        #expect(h.log.all.suffix(3) == ["pause begin", "pause end", "set default.configured.audio.sink=\(H.speakers)"])
        var paused: ControlWire.PlaybackEvent?
        while paused == nil, let event = await events.next() {
            if case .playback(let change) = event { paused = change }
        }
        #expect(paused?.action == OpenEnum(.paused))
        #expect(paused?.reason == OpenEnum(.sinkRemoved))
        #expect(paused?.players == [FakePlayers.player.busName])
        await h.stop()
    }

    @Test("a config reload is decided as config-changed and applied; an identical one changes nothing")
    func configReload() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        var config = PolicyConfig()
        config.rules = [NodeRule(matches: [PropertyMatch(key: "node.name", glob: Glob(H.headphones))], action: .ignore)]
        let source = ConfigSource.resolve(explicit: "/nonexistent/earshot.toml", environment: [:], fileExists: { _ in false })
        _ = await h.daemon.submit(.configLoaded(config, source, cause: "test"))
        #expect(await h.daemon.decisions.last?.trigger == .configReplaced)
        let count = h.log.all.count
        _ = await h.daemon.submit(.configLoaded(config, source, cause: "test again"))
        #expect(h.log.all.count == count)
        await h.stop()
    }

    @Test("a config reload that reserves a registered accessory for another reporter announces it invalidated, before the route change")
    func reloadInvalidates() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.echo()
        var events = await h.daemon.subscribe().makeAsyncIterator()
        var config = PolicyConfig()
        var entry = StaticAccessory()
        entry.address = BluetoothAddress(H.address)
        entry.reporter = "org.example.trusted"
        entry.location = SourceLocation(file: "e.toml", line: 4, column: 1)
        config.accessories = [entry]
        let source = ConfigSource.resolve(explicit: "/nonexistent/earshot.toml", environment: [:], fileExists: { _ in false })
        _ = await h.daemon.submit(.configLoaded(config, source, cause: "test"))
        if case .failure(let error) = await h.daemon.current(Self.identity) {
            #expect(error.code == .invalidated)
        } else {
            Issue.record("the registration is gone")
        }
        await h.stop()  // ends the subscription: what it holds is everything the reload told
        var seen: [ControlWire.Event] = []
        while let event = await events.next() { seen.append(event) }
        let invalidated = seen.compactMap { event -> ControlWire.AccessoryEvent? in
            if case .accessory(let change) = event { change } else { nil }
        }
        #expect(invalidated.map(\.change) == [OpenEnum(.invalidated)])
        #expect(invalidated.first?.accessory == H.address)
        #expect(invalidated.first?.reporter == "org.earshot.test")
        #expect(invalidated.first?.configuration == nil)
        if let route = seen.firstIndex(where: { if case .routeChange = $0 { true } else { false } }) {
            #expect(seen.firstIndex(where: { if case .accessory = $0 { true } else { false } }) ?? route < route)
        }
    }

    @Test("BlueZ adapters: announced to subscribers before the decision they cause; nothing decided before the first graph")
    func hostAddresses() async throws {
        let h = try await H()
        var events = await h.daemon.subscribe().makeAsyncIterator()
        let adapter = HostAddress(BluetoothAddress("11:22:33:44:55:66")!, from: [.bluez(adapter: "hci0")])
        _ = await h.daemon.submit(.hostAddressesChanged([adapter]))
        #expect(await h.decision == nil, "no graph yet: the first real decision stays 'initial'")
        await h.connect(H.graph(sessionManager: true))
        #expect(await h.decision?.reason == .initial)
        #expect(await h.daemon.status().hostAddresses.map(\.address) == [adapter.address.description])
        guard case .hostAddresses(let change)? = await events.next() else {
            Issue.record("the first event is the host-address change")
            return
        }
        #expect(change.added == [adapter.address.description])
        await h.stop()
    }

    @Test("a reconnect replaces the graph: a sink that appeared meanwhile has arrived; the old connection's disconnect is ignored")
    func reconnect() async throws {
        let h = try await H()
        let first = FakePipeWire(log: h.log)
        _ = await h.daemon.submit(.connected(first, H.graph(sessionManager: true)))
        _ = await h.daemon.submit(.disconnected(first))
        #expect(await h.daemon.status().mode == .disconnected)
        await h.connect(H.graph(sessionManager: true))
        #expect(await h.daemon.status().mode == .cooperative)
        _ = await h.daemon.submit(.disconnected(first))  // late news about the old one
        #expect(await h.daemon.status().connected)
        await h.stop()
    }

    @Test("cooperative: a pinned stream's pin is written once, before the default moves")
    func pinnedStream() async throws {
        let h = try await H()
        var graph = H.graph(sessionManager: true)
        var stream = try #require(graph.nodes[H.streamID])
        stream.props["target.object"] = H.speakers
        graph.apply(.node(stream))
        await h.connect(graph)
        _ = await h.place("on-head", register: true)
        #expect(h.log.all == [
            "set \(H.streamID) target.object=\(H.speakers)", "set default.configured.audio.sink=\(H.headphones)",
        ])
        await h.echo()
        _ = await h.place("off-head")
        #expect(h.log.all.filter { $0.contains("target.object") }.count == 1)
        await h.stop()
    }

    @Test("WirePlumber 0.5 honours a stream's own pin: Earshot writes nothing for it, and says which version runs")
    func pinnedStreamWirePlumber05() async throws {
        let h = try await H()
        var graph = H.graph(sessionManager: true)
        graph.apply(.client(Client(id: 20, props: [
            "application.process.binary": "wireplumber", "wireplumber.daemon": "true", "application.version": "0.5.8", "object.serial": "520",
        ])))
        var stream = try #require(graph.nodes[H.streamID])
        stream.props["target.object"] = H.speakers
        graph.apply(.node(stream))
        await h.connect(graph)
        let status = await h.daemon.status()
        #expect(status.sessionManager == "WirePlumber" && status.sessionManagerVersion == "0.5.8")
        _ = await h.place("on-head", register: true)
        await h.echo()
        _ = await h.place("off-head")
        #expect(!h.log.all.contains { $0.contains("target.object") }, "\(h.log.all)")
        await h.stop()
    }

    @Test("standalone: a new stream gets ports first, then a link when its ports appear")
    func standaloneNewStream() async throws {
        let h = try await H()
        var graph = H.graph(sessionManager: false)
        graph.apply(.removed(61))  // the stream has no ports yet
        await h.connect(graph)
        #expect(h.log.all.contains("ports \(H.streamID) FL"))
        #expect(!h.log.all.contains { $0.hasPrefix("link") })
        await h.echo()
        await h.changes(.port(Port(id: 62, direction: .output, props: ["node.id": String(H.streamID), "audio.channel": "FL"])))
        #expect(h.log.all.last == "link \(H.streamID)→40", "to the configured default, the speakers")
        #expect(h.log.all.filter { $0.hasPrefix("ports") }.count == 1, "ports are asked for once")
        await h.stop()
    }

    @Test("standalone: a stream that cannot be linked is tried once, and again only when a port of either end changes")
    func unlinkableStream() async throws {
        let h = try await H()
        h.pipewire.failLinks(true)
        await h.connect(H.graph(sessionManager: false))
        await h.echo()
        #expect(h.log.all.filter { $0.hasPrefix("link") } == ["link \(H.streamID)→40"])
        // The failed link's own events, a client, a node state: nothing that could help.
        for _ in 0..<50 {
            await h.changes(.link(Link(id: 90, outputNode: H.streamID, outputPort: 61, inputNode: 40, inputPort: 41)), .removed(90))
            await h.changes(.client(Client(id: 22, props: ["object.serial": "522"])))
        }
        #expect(h.log.all.filter { $0.hasPrefix("link") }.count == 1, "no retry until something changes")
        // The sink gets another port: worth another try, which now works.
        h.pipewire.failLinks(false)
        await h.changes(.port(Port(id: 42, direction: .input, props: ["node.id": "40", "audio.channel": "FR", "object.serial": "542"])))
        #expect(h.log.all.filter { $0.hasPrefix("link") }.count == 2)
        #expect(h.pipewire.ownedLinks()[H.streamID]?.values.sorted() == [40])
        await h.stop()
    }

    /// `h`'s daemon started again over the same state (it was stopped): restored, taking inputs.
    static func restart(_ h: H) throws -> (Daemon, Task<Void, Never>) {
        let restarted = try Daemon(options: h.daemon.environment.options, logger: h.daemon.environment.logger, clock: TestClock())
        return (restarted, Task { await restarted.restoreState(); await restarted.takeInputs() })
    }

    static func stop(_ daemon: Daemon, _ consumer: Task<Void, Never>) async {
        await daemon.stop()
        await consumer.value
    }

    @Test("a restart never moves audio: restored worn headphones do not take the output from speakers picked while the daemon was away")
    func restartKeepsTheUsersPick() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.echo()
        await h.daemon.stop()
        // The user picks the speakers while the daemon is away; it starts again.
        let (restarted, consumer) = try Self.restart(h)
        let log = EffectLog()
        _ = await restarted.submit(.connected(FakePipeWire(log: log), H.graph(sessionManager: true)))
        let decision = await restarted.decisions.last
        #expect(decision?.defaultSink == H.speakers)
        #expect(decision?.previous == H.speakers, "previous starts as the configured default")
        #expect(decision?.reason == .initial)
        #expect(log.all.isEmpty, "nothing written: \(log.all)")
        // The reporter confirms the known placement: no transition, the pick holds.
        _ = await restarted.perform(.register(Self.identity, reporter: "org.earshot.test", AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .onHead)))
        #expect(await restarted.status().decisionRecord?.default == H.speakers)
        #expect(await restarted.decisions.history.allSatisfy { $0.reason != "user-override" })
        await Self.stop(restarted, consumer)
        await h.stop()
    }

    @Test("a start still follows a reporter that put the headset on before the first graph")
    func transitionBeforeTheFirstGraph() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("off-head", register: true)
        await h.daemon.stop()
        let (restarted, consumer) = try Self.restart(h)
        // The reporter puts it on while the daemon has no graph yet.
        _ = await restarted.perform(.update(Self.identity, AccessoryUpdate(placement: .set(.inEar))))
        _ = await restarted.submit(.connected(FakePipeWire(log: EffectLog()), H.graph(sessionManager: true)))
        #expect(await restarted.status().decisionRecord?.default == H.headphones)
        await Self.stop(restarted, consumer)
        await h.stop()
    }

    /// Placements said after a restart (restored on-head) but before the first graph: whether
    /// the start follows them (§5), and what the start then writes.
    static let beforeTheFirstGraph: [(placement: Placement, graphDefault: String?, expected: String, writesNothing: Bool)] = [
        // Taken off within its off-grace: no transition has taken effect when the graph comes
        // (whose default is the headphones); the start follows it anyway. Found by ReportCLITests
        // under load: the old default was held for good.
        (.offHead, H.headphones, H.speakers, false),
        // The restored placement confirmed, or another worn one: a plain restart, the speakers
        // the user picked while the daemon was away hold and nothing is written.
        (.onHead, nil, H.speakers, true),
        (.inEar, nil, H.speakers, true),
    ]

    @Test(
        "a placement said before the first graph after a restart: taken off (even within the off-grace) is followed; the restored one confirmed, or in-ear after on-head (worn either way), holds the found default",
        arguments: beforeTheFirstGraph.indices)
    func placementBeforeTheFirstGraph(_ index: Int) async throws {
        let case_ = Self.beforeTheFirstGraph[index]
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        await h.daemon.stop()
        let (restarted, consumer) = try Self.restart(h)
        let log = EffectLog()
        _ = await restarted.perform(.update(Self.identity, AccessoryUpdate(placement: .set(case_.placement))))
        var graph = H.graph(sessionManager: true)
        if let configured = case_.graphDefault { graph.apply(H.defaultWritten(configured)) }
        _ = await restarted.submit(.connected(FakePipeWire(log: log), graph))
        #expect(await restarted.status().decisionRecord?.default == case_.expected)
        if case_.writesNothing { #expect(log.all.isEmpty, "nothing written: \(log.all)") }
        await Self.stop(restarted, consumer)
        await h.stop()
    }

    @Test("a registration is on disk when its reply comes; a restart restores it as stale and moves nothing")
    func persistence() async throws {
        let h = try await H()
        await h.connect(H.graph(sessionManager: true))
        _ = await h.place("on-head", register: true)
        let saved = try StateStore(path: h.daemon.environment.options.statePath).load()
        #expect(saved.registrations.map(\.identity) == [Self.identity])
        #expect(saved.history.last?.current == H.headphones)

        let (restarted, consumer) = try Self.restart(h)
        let log = EffectLog()
        var graph = H.graph(sessionManager: true)
        graph.apply(H.defaultWritten(H.headphones))
        _ = await restarted.submit(.connected(FakePipeWire(log: log), graph))
        #expect(log.all.isEmpty, "a restart never moves audio")
        #expect(await restarted.list().first?.stale == true)
        await Self.stop(restarted, consumer)
        await h.stop()
    }
}
