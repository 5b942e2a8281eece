import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// A restart never moves audio (docs/policy.md §5), on both stacks (scripts/test).
@Suite("Restart", .serialized, .timeLimit(.minutes(5)), .blockingCalls)
struct RestartTests {
    typealias D = DaemonFixture

    /// Issue 19: the user never picked a default; only the session manager's effective
    /// `default.audio.sink` is there. Starting Earshot, and restarting it, must not move audio.
    @Test("a first start and a restart against a graph with only default.audio.sink write nothing and move nothing")
    func startWithOnlyTheEffectiveDefault() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let (_, mpv) = try await sandbox.startPlayer()
            let before = try await sandbox.observer.waitUntil("an effective default only", timeout: .seconds(10)) {
                $0.effectiveDefaultSinkName != nil && $0.configuredDefaultSinkName == nil
                    && !$0.outgoingLinks(of: mpv.id).isEmpty
            }
            let effective = try #require(before.effectiveDefaultSinkName)
            let playedOn = before.linkedTargets(of: mpv.id).map(\.name)
            var daemon: DaemonFixture?
            defer { daemon?.process.stop() }
            for (index, round) in ["first start", "restart"].enumerated() {
                let writes = try await ConfiguredDefaultWrites.start(remote: sandbox.socketPath)
                if let running = daemon {
                    daemon = try await running.restartedOffPool()
                } else {
                    daemon = try await D.startOffPool(in: sandbox)
                }
                let current = try #require(daemon)
                // The first decision is made in the turn that logs this; status comes after.
                // (Both daemons append to one log: the restarted one's is the second line.)
                try await current.process.waitForLog(containing: "connected to PipeWire", occurrences: index + 1)
                let session = try DaemonSession(path: current.socketPath)
                let status = try await session.status()
                #expect(status["decision"]?["default"] == .string(effective), "\(round): \(status["decision"] ?? .null)")
                #expect(status["decision"]?["changed"] == .bool(false), "\(round)")
                #expect(status["decision"]?["decided-by"]?["tier"] == .string("override"), "\(round): the default found holds")
                let seen = try await writes.stop()
                #expect(seen.isEmpty, "\(round): configured-default writes: \(seen)")
                let graph = sandbox.observer.snapshot()
                #expect(graph.configuredDefaultSinkName == nil && graph.effectiveDefaultSinkName == effective, "\(round)")
                #expect(graph.linkedTargets(of: mpv.id).map(\.name) == playedOn, "\(round): the stream did not move")
            }
        }
    }

    @Test("speakers picked by hand while the daemon was away stay the default across restarts; nothing is written, no override recorded")
    func restartKeepsTheUsersPick() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let (_, mpv) = try await sandbox.startPlayer()
            var daemon = try await D.startOffPool(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "on-head")
            let graph = try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            daemon.process.stop()
            let speakers = try #require(graph.node(named: D.speakers))
            let picked = try await offPool { try sandbox.run(["wpctl", "set-default", String(speakers.id)]) }
            #expect(picked.status == 0)
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])

            for round in 0..<LongTests.count(short: 3, long: 20) {
                let writes = try await ConfiguredDefaultWrites.start(remote: sandbox.socketPath)
                daemon = try await daemon.restartedOffPool()
                let session = try DaemonSession(path: daemon.socketPath)
                #expect(try await daemon.settle(session, effectiveToo: false) == D.speakers, "round \(round)")
                let status = try await session.status()
                #expect(status["decision"]?["reason"] == .string("initial"), "round \(round): \(status["decision"]?["reason"] ?? .null)")
                #expect(status["decision"]?["previous"] == .string(D.speakers), "round \(round): previous starts as the configured default")
                // The reporter confirms the known placement: still the user's pick.
                let current = daemon
                try await offPool { try current.register(placement: "on-head") }
                #expect(try await session.decidedDefault() == D.speakers, "round \(round)")
                let seen = try await writes.stop()
                #expect(seen.isEmpty, "round \(round): configured-default writes after the restart: \(seen)")
                #expect(!daemon.process.logTail(lines: 1000).contains("route user-override"), "round \(round): an override that never happened")
            }
        }
    }
}

/// One daemon per PipeWire, with or without a session bus (issue: a second daemon with another
/// `--socket` and no bus ran against the same PipeWire and wrote its own default).
@Suite("Single instance", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct SingleInstanceTests {
    typealias D = DaemonFixture

    @Test("without a session bus, a second daemon with another control socket is refused; after the first exits, one starts")
    func oneDaemonPerPipeWire() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            var first = try await D.startOffPool(in: sandbox)
            defer { first.process.stop() }
            let other = sandbox.runtimeDir.appendingPathComponent("other-control").path
            let second = try sandbox.spawn("earshot-daemon-2", [first.binary, "daemon", "--socket", other])
            #expect(second.waitForExit(timeout: .seconds(20)) == 1)
            #expect(second.logTail().contains("another earshot daemon already routes this PipeWire"), "\(second.logTail())")
            // The lock goes with its holder, even killed.
            first.process.signal(SIGKILL)
            _ = first.process.waitForExit(timeout: .seconds(10))
            first = try await first.restartedOffPool()
            #expect(first.process.exitStatus == nil)
        }
    }
}

/// A config that cannot be used at start: the daemon says where and exits 78 (EX_CONFIG), which
/// the systemd unit's `RestartPreventExitStatus` keeps from being restarted until it is fixed.
@Suite("Unusable config at start", .timeLimit(.minutes(2)), .blockingCalls)
struct UnusableConfigAtStartTests {
    @Test("the daemon names file:line, exits 78 and leaves no control socket; the shipped unit does not restart on 78")
    func exitsWithConfigStatus() async throws {
        try await withSandbox(.init(sinks: [.speakers()])) { sandbox in
            let config = sandbox.root.appendingPathComponent("broken.toml").path
            try "[timing]\noff-grace-ms = \"soon\"\n".write(toFile: config, atomically: true, encoding: .utf8)
            let socket = sandbox.runtimeDir.appendingPathComponent("earshot/control").path
            let daemon = try sandbox.spawn("earshot-daemon", [try #require(EarshotBinary.url).path, "daemon", "--config", config])
            #expect(try await offPool { daemon.waitForExit(timeout: .seconds(20)) } == 78)
            #expect(daemon.logTail().contains("\(config):2:1: timing.off-grace-ms must be an integer"), "\(daemon.logTail())")
            #expect(!FileManager.default.fileExists(atPath: socket))
            let unit = try String(contentsOf: EarshotBinary.repository.appendingPathComponent("dist/earshot.service.in"), encoding: .utf8)
            #expect(unit.contains("\nRestartPreventExitStatus=78\n"))
        }
    }
}

/// `earshot watch --reconnect` follows the daemon across a restart.
@Suite("Watch reconnect", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct WatchReconnectTests {
    typealias D = DaemonFixture

    @Test("watch --reconnect: the daemon restarts, watch says so once, subscribes again and prints the next route change")
    func followsRestart() async throws {
        try await withSandbox(.init(sinks: [.speakers(), .headphones()])) { sandbox in
            var daemon = try await D.startOffPool(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "off-head")
            let watch = try sandbox.spawn("watch", [daemon.binary, "watch", "--reconnect", "--json"])
            defer { watch.stop() }
            try await watch.waitForLog(containing: "earshot watch: subscribed at \(daemon.socketPath)")
            daemon = try await daemon.restartedOffPool()
            try await watch.waitForLog(containing: "earshot watch: subscribed at \(daemon.socketPath)", occurrences: 2)
            try daemon.place("on-head")
            try await watch.waitForLog(containing: "\"current\":\"\(D.headphones)\"")
            #expect(watch.logTail(lines: 100).components(separatedBy: "the daemon went away").count - 1 == 1, "told once: \(watch.logTail(lines: 100))")
            #expect(!watch.hasExited)
        }
    }
}
