import AudioGraph
import Foundation
import PipeWireTestSupport
import Synchronization
import SystemBridge
import TestScheduling
import Testing

/// WirePlumber leaves and comes back while Earshot runs and a stream plays: Earshot takes over
/// (standalone) and hands back (cooperative) without a stream ever playing on two sinks, ends
/// with one `default` metadata object, and the default is the policy's decision. Runs on both
/// stacks (scripts/test).
@Suite("Session manager hand-over", .serialized, .blockingCalls)
struct SessionManagerHandOverTests {
    typealias D = DaemonFixture

    /// Watches every graph change the observer sees and remembers each moment a stream played
    /// to two sinks through links of two clients (Earshot's and the session manager's: the
    /// mixing nobody cleans up). Earshot's own make-before-break overlaps its new and old links,
    /// both its own, for the moment the old ones take to go: that is a move, not mixing.
    final class MixingWatch: Sendable {
        final class Record: Sendable {
            let entries = Mutex<[String]>([])
        }
        private let record = Record()
        private let wait: PipeWireConnection.ArmedWait

        init(_ observer: PipeWireConnection) throws {
            let record = self.record
            wait = try observer.arm("a stream on two sinks (never fulfilled)") { graph in
                for stream in graph.playbackStreams {
                    let links = graph.outgoingLinks(of: stream.id).filter { graph.nodes[$0.inputNode]?.isAudioSink == true }
                    let sinks = Set(links.map(\.inputNode)), clients = Set(links.map { $0.props["client.id"] ?? "?" })
                    guard sinks.count > 1, clients.count > 1 else { continue }
                    let described = links.map { "\($0.id): →\(graph.nodes[$0.inputNode]?.name ?? "?") by client \($0.props["client.id"] ?? "?")" }
                    record.entries.withLock { $0.append("\(stream.name ?? "#\(stream.id)"): \(described)") }
                }
                return false
            }
        }

        var seen: [String] { record.entries.withLock { $0 } }
    }

    static func defaultMetadataCount(_ graph: Graph) -> Int {
        graph.metadata.values.filter { $0.name == "default" }.count
    }

    /// Waits until the daemon's mode is `mode`, there is one `default` metadata object, and the
    /// decided default is configured and plays every following stream.
    /// - Parameter streams: also wait until every following stream plays there.
    /// A guard against a hang, not a bound: PipeWire's own fault with a bind pending as
    /// WirePlumber dies costs Earshot a 10 s round-trip timeout and a reconnection before it can
    /// settle (seen taking the whole of a 20 s guard at a load average of 20).
    static func settle(_ daemon: D, _ session: DaemonSession, mode: String, on expected: String, streams: Bool = true) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let status = try await session.status()
            guard status["mode"] == .string(mode), case .string(let decided)? = status["decision"]?["default"], decided == expected else {
                _ = try? await daemon.sandbox.observer.waitUntil("any change", timeout: .milliseconds(200)) { _ in false }
                continue
            }
            do {
                _ = try await daemon.sandbox.observer.waitUntil("one default metadata naming \(decided), streams there", timeout: .seconds(2)) {
                    defaultMetadataCount($0) == 1 && $0.configuredDefaultSinkName == decided
                        && (!streams || $0.routesEverything(to: decided, effectiveToo: false))
                }
                return decided
            } catch {
                continue
            }
        }
        let graph = daemon.sandbox.observer.snapshot()
        let links = graph.links.values.sorted { $0.id < $1.id }.map { "\($0.id): \($0.outputNode)→\($0.inputNode) \($0.state.map { "\($0)" } ?? "")" }
        let streams = graph.playbackStreams.map { "\($0.id) \($0.name ?? "")" }
        throw FixtureError("never settled in \(mode) mode on \(expected): \(graph.routeSummary), links \(links), streams \(streams), \(defaultMetadataCount(daemon.sandbox.observer.snapshot())) default metadata\n\(daemon.process.logTail(lines: 400))")
    }

    @Test("WirePlumber dies → standalone within a second; comes back → cooperative, Earshot's metadata and links handed back; three quick restarts")
    func handOver() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let daemon = try await D.startOffPool(in: sandbox)
            defer { daemon.process.stop() }
            let session = try DaemonSession(path: daemon.socketPath)
            try await session.register(D.address, placement: "on-head")
            let (player, _) = try await sandbox.startPlayer()
            defer { player.stop() }
            _ = try await Self.settle(daemon, session, mode: "cooperative", on: D.headphones)
            let watch = try MixingWatch(sandbox.observer)

            // WirePlumber dies: Earshot provides the metadata and links the stream itself.
            let killed = ContinuousClock.now
            try await offPool { try sandbox.killWirePlumber() }
            _ = try await Self.settle(daemon, session, mode: "standalone", on: D.headphones)
            // Taken over on WirePlumber's going (its client and metadata removed), not after a
            // round trip timed out and the connection was made again: by what happened, not a
            // bound in seconds (issue 28). How fast is the bench's to say.
            #expect(!daemon.process.logTail(lines: 400).contains("stopped answering"), "took over only after a reconnection")
            print("session manager hand-over: standalone \(killed.duration(to: .now)) after WirePlumber was killed")

            // It comes back: one metadata object again, WirePlumber's; the decision written once.
            try sandbox.startWirePlumber()
            _ = try await Self.settle(daemon, session, mode: "cooperative", on: D.headphones)
            // The decision changes after the hand-back: WirePlumber moves the stream.
            try await session.place(D.address, "off-head")
            _ = try await Self.settle(daemon, session, mode: "cooperative", on: D.speakers)

            // Three quick restarts in a row, then it settles on the decision. WirePlumber 0.4
            // itself (measured without Earshot) never re-adopts a stream that outlived it, and restarted this fast
            // it sometimes reconfigures the stream and never finishes adopting it ("pending
            // linkable(s) not activated"): there only the metadata is Earshot's to get right.
            // 0.5 adopts streams: they must play there too.
            do {
                let adopts = try await session.status()["session-manager-version"].map { $0 != .null } ?? false
                for _ in 0..<3 {
                    try await offPool { try sandbox.killWirePlumber() }
                    try sandbox.startWirePlumber()
                }
                _ = try await Self.settle(daemon, session, mode: "cooperative", on: D.speakers, streams: adopts)
                try await session.place(D.address, "on-head")
                _ = try await Self.settle(daemon, session, mode: "cooperative", on: D.headphones, streams: adopts)
            }
            #expect(watch.seen.isEmpty, "mixing seen: \(watch.seen.prefix(5))")
        }
    }
}
