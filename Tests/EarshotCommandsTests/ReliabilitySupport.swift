@testable import ControlProtocol
import AudioGraph
@testable import EarshotCommands
import EarshotDaemon
import Foundation
import PipeWireTestSupport

/// `EARSHOT_LONG_TESTS=1` runs the long versions of the reliability tests (minutes, locally).
enum LongTests {
    static let enabled = ProcessInfo.processInfo.environment["EARSHOT_LONG_TESTS"] == "1"

    /// `short` in CI, `long` with EARSHOT_LONG_TESTS=1.
    static func count(short: Int, long: Int) -> Int { enabled ? long : short }

    /// EARSHOT_SEED, or a fixed seed: a failing run is reproduced by its seed.
    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["EARSHOT_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2024
    }
}


/// One open control connection to a real daemon (the CLI's own client), used from threads
/// of its own: one request at a time.
final class DaemonSession: @unchecked Sendable {
    private let client: ControlClient
    private let lock = NSLock()

    init(path: String) throws {
        client = try ControlClient.connect(path: path)
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    func request(_ operation: ControlOperation, _ fields: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        try await offPool { [self] in
            try lock.withLock {
                // The raw JSON of the reply: these tests check the wire itself.
                switch try client.request(operation, JSONValue.object(fields), reply: JSONValue.self) {
                case .success(.object(let fields)): return fields
                case .success(let other): throw Refused(description: "\(operation.rawValue) answered with \(other.canonicalText), not an object")
                case .failure(let error): throw Refused(description: "\(operation.rawValue) refused: \(error.code.rawValue): \(error.message)")
                }
            }
        }
    }

    func register(_ accessory: String, placement: String) async throws {
        _ = try await request(.register, [
            "accessory": .string(accessory), "reporter": .string("org.earshot.reliability"),
            "capabilities": .array([.string("audio-switching"), .string("placement")]), "placement": .string(placement),
        ])
    }

    func place(_ accessory: String, _ placement: String) async throws {
        _ = try await request(.update, ["accessory": .string(accessory), "placement": .string(placement)])
    }

    /// The `status` reply's status object.
    func status() async throws -> JSONValue {
        try await request(.status)["status"] ?? .null
    }

    /// The default of the daemon's latest decision.
    func decidedDefault() async throws -> String? {
        if case .string(let name)? = try await status()["decision"]?["default"] { return name }
        return nil
    }

    /// The default of the daemon's latest decision once no node is settling (§1: an arrival
    /// counts after its settle time, so a decision with a node settling is not the last).
    func settledDefault() async throws -> String? {
        let decision = try await status()["decision"]
        let summaries = [decision?["summary"], decision?["input"]?["summary"]].compactMap { $0?.propertyText }
        guard !summaries.contains(where: { $0.contains("settling") }) else { return nil }
        if case .string(let name)? = decision?["default"] { return name }
        return nil
    }

    func registeredAccessories() async throws -> [String] {
        let reply = try await request(.list)
        guard case .array(let entries)? = reply["accessories"] else { return [] }
        return entries.compactMap { $0["accessory"]?.propertyText }
    }
}

extension Graph {
    /// Streams that follow the default: playback streams with output ports that nobody pinned.
    var followingStreams: [Node] {
        playbackStreams.filter { stream in
            stream.props["target.object"] == nil && stream.props["node.target"] == nil && stream.props["node.autoconnect"] != "false"
                && !ports(of: stream.id, direction: .output).isEmpty
        }
    }

    /// Every following stream linked to `sink` only, one link per output port, and the default
    /// metadata naming `sink` (both keys when `effectiveToo`, as standalone Earshot writes both).
    func routesEverything(to sink: String, effectiveToo: Bool) -> Bool {
        guard isDefault(sink), !effectiveToo || effectiveDefaultSinkName == sink,
            let node = node(named: sink)
        else { return false }
        return followingStreams.allSatisfy { stream in
            let links = outgoingLinks(of: stream.id)
            return !links.isEmpty && links.allSatisfy { $0.inputNode == node.id }
                && links.count == ports(of: stream.id, direction: .output).count
        }
    }

    /// The default and where each stream plays, for failure messages.
    var routeSummary: String {
        let streams = playbackStreams.map { stream in
            "\(stream.name ?? "#\(stream.id)")→\(linkedTargets(of: stream.id).map { $0.name ?? "#\($0.id)" })×\(outgoingLinks(of: stream.id).count)"
        }
        return "configured \(configuredDefaultSinkName ?? "-"), effective \(effectiveDefaultSinkName ?? "-"), sinks \(sinks.compactMap(\.name)), streams \(streams)"
    }

    /// Links from a playback stream to something that is not an existing sink.
    var strayStreamLinks: [Link] {
        playbackStreams.flatMap { outgoingLinks(of: $0.id) }.filter { link in nodes[link.inputNode]?.isAudioSink != true }
    }
}

extension DaemonFixture {
    /// Waits until the daemon's decision and the graph agree: the decided default is in the
    /// `default` metadata and every following stream plays there only. Returns the default.
    @discardableResult
    func settle(_ session: DaemonSession, effectiveToo: Bool = true, timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var lastProblem = "no decision"
        while ContinuousClock.now < deadline {
            guard let decided = try await session.settledDefault() else {
                lastProblem = "no decision yet, or a node settling"
                try? await Task.sleep(for: .milliseconds(20))  // retry backoff
                continue
            }
            let left = ContinuousClock.now.duration(to: deadline)
            do {
                _ = try await sandbox.observer.waitUntil("everything routed to \(decided)", timeout: min(left, .seconds(2))) {
                    $0.routesEverything(to: decided, effectiveToo: effectiveToo)
                }
            } catch {
                lastProblem = "not routed to \(decided): \(sandbox.observer.snapshot().routeSummary)"
                continue
            }
            // Still the decision once the graph shows it: settled.
            if try await session.settledDefault() == decided { return decided }
        }
        throw FixtureError("never settled: \(lastProblem)\n\(process.logTail(lines: 60))")
    }
}

/// Sandbox steps whose blocking parts (a pw-cli run, a daemon's start) go off the cooperative
/// pool, then wait on the observer.
extension PipeWireSandbox {
    func addSink(_ sink: VirtualSink) async throws {
        let arguments = ["pw-cli", "create-node", "adapter", sink.adapterArguments(autoPortConfig: true)]
        let result = try await offPool { try self.run(arguments) }
        guard result.status == 0 else { throw FixtureError("pw-cli create-node failed (\(result.status)): \(result.output)") }
        let name = sink.name, channels = sink.channels.count
        _ = try await observer.waitUntil("sink \(name) with \(channels) input ports") { graph in
            guard let node = graph.node(named: name) else { return false }
            return graph.ports(of: node.id, direction: .input).count == channels
        }
    }

    func removeSink(named name: String) async throws {
        guard let node = observer.snapshot().node(named: name) else { throw FixtureError("no sink named \(name)") }
        try await observer.destroy(node.id)
        _ = try await observer.waitUntil("sink \(name) removed") { $0.node(named: name) == nil }
    }
}

extension DaemonFixture {
    static func startOffPool(in sandbox: PipeWireSandbox) async throws -> DaemonFixture {
        try await offPool { try DaemonFixture.start(in: sandbox) }
    }

    /// `restart()` (SIGTERM if still running, then a new daemon on the same state) off the pool.
    func restartedOffPool() async throws -> DaemonFixture {
        try await offPool { [self] in
            var restarted = self
            try restarted.restart()
            return restarted
        }
    }
}
