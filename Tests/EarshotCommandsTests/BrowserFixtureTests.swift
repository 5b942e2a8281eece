import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// The fixture for live tests with real players that Earshot does not control: Debian's
/// chromium and firefox-esr (on Xvfb, through pipewire-pulse, MPRIS on the sandbox's bus) and
/// paplay (no MPRIS). One browser at a time: each is a dozen processes on two cores.
/// Prints what it measured (`browser facts:` lines; docs/testing-browsers.md).
@Suite("Browser fixture: real chromium, firefox-esr and paplay in the sandbox", .serialized, .timeLimit(.minutes(5)), .blockingCalls)
struct BrowserFixtureTests {
    static let speakers = VirtualSink.speakers()

    @Test(
        "the browser plays the tone page into the default sink through pipewire-pulse, publishes MPRIS Playing from its main process, is Paused by MPRIS Pause and its stream stops running; stopping it leaves no process",
        arguments: Browser.Kind.allCases)
    func browserPlaysAndPauses(kind: Browser.Kind) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [Self.speakers], pulse: true)) { sandbox in
            let started = ContinuousClock.now
            let browser = try await Browser.start(kind, in: sandbox)
            let stream = try await browser.waitForStream()
            let streamAt = ContinuousClock.now
            let graph = sandbox.observer.snapshot()
            #expect(graph.linkedTargets(of: stream.id).contains { $0.name == Self.speakers.name })
            #expect(graph.effectiveDefaultSinkName == Self.speakers.name)
            #expect(stream.props["client.api"] == "pipewire-pulse")
            let name = try await browser.waitForMPRISName()
            let mprisAt = ContinuousClock.now
            #expect(name.hasPrefix(kind.mprisNamePrefix))
            try await browser.waitForPlaybackStatus("Playing")
            let playing = sandbox.observer.snapshot()

            // Who plays, and who owns the MPRIS name: the main process (the group's leader).
            let streamPID = try #require(Browser.processID(of: stream, in: graph))
            let owner = try await browser.mprisOwnerPID()
            #expect(owner == browser.pid)
            let members = browser.processGroup.members()
            let streamProcess = try #require(members.first { $0.pid == streamPID }, "the stream's process \(streamPID) is in the browser's group")
            switch kind {
            case .chromium:
                // Chromium plays from its audio service, a child of the main process.
                #expect(streamProcess.parent == owner)
            case .firefox:
                // Firefox plays from its main process itself.
                #expect(streamPID == owner)
            }

            // MPRIS Pause: the status follows at once; the stream stops running (Firefox corks
            // it; Chromium keeps it running on silence a while, then idles and closes it).
            let pausedAt = ContinuousClock.now
            try await browser.pause()
            try await browser.waitForPlaybackStatus("Paused")
            let statusAt = ContinuousClock.now
            let serial = stream.serial
            let quiet = try await sandbox.observer.waitUntil("\(kind)'s stream stops running", timeout: .seconds(60)) { graph in
                guard let node = graph.nodes[stream.id], node.serial == serial else { return true }
                return node.state != .running
            }
            let quietAt = ContinuousClock.now
            let quietNode = quiet.nodes[stream.id].flatMap { $0.serial == serial ? $0 : nil }
            let after = quietNode.map { "\($0.state?.rawValue ?? "?") (pulse.corked=\($0.props["pulse.corked"] ?? "-"))" } ?? "removed"

            print(Self.facts(kind: kind, graph: playing, stream: playing.nodes[stream.id] ?? stream, name: name, owner: owner, members: members))
            print("browser facts [\(kind)]: stream after \(started.duration(to: streamAt)), MPRIS name after \(started.duration(to: mprisAt)); Pause → PlaybackStatus Paused \(pausedAt.duration(to: statusAt)), → stream \(after) \(pausedAt.duration(to: quietAt))")

            let stopping = ContinuousClock.now
            browser.stop()
            let stopped = ContinuousClock.now
            // The whole tree is gone and reaped: the group does not exist any more.
            #expect(browser.processGroup.members().isEmpty, "left behind: \(browser.processGroup.members())")
            #expect(!browser.processGroup.exists)
            #expect(ProcessTable.entry(browser.pid) == nil)
            print("browser facts [\(kind)]: stopped in \(stopping.duration(to: stopped)), exit status \(browser.process.exitStatus.map(String.init) ?? "none")")
            _ = try await sandbox.observer.waitUntil("\(kind)'s stream removed", timeout: .seconds(20)) { graph in
                graph.nodes[stream.id]?.serial != serial
            }
            // Nothing was started on the browser's behalf outside its group: the sandbox's bus
            // starts no services (Firefox asks for org.a11y.Bus).
            let bus = try #require(sandbox.sessionBusProcess)
            let busChildren = ProcessTable.snapshot().filter { $0.parent == bus.pid && !$0.hasExited }
            #expect(busChildren.isEmpty, "started by the session bus: \(busChildren)")
        }
    }

    @Test("paplay plays through pipewire-pulse into the default sink, endlessly, and owns no MPRIS name")
    func pulsePlayerWithoutMPRIS() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [Self.speakers], pulse: true)) { sandbox in
            let (player, stream) = try await sandbox.startPulsePlayer(name: "no-mpris-player")
            let graph = sandbox.observer.snapshot()
            #expect(graph.linkedTargets(of: stream.id).contains { $0.name == Self.speakers.name })
            #expect(stream.props["client.api"] == "pipewire-pulse")
            #expect(stream.props["application.name"] == "no-mpris-player")
            #expect(Browser.processID(of: stream, in: graph) == player.pid)
            let bus = try DBusConnection(.address(try #require(sandbox.environment["DBUS_SESSION_BUS_ADDRESS"])))
            defer { bus.close() }
            let names = try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ListNames"
            ).first?.stringList ?? []
            #expect(!names.contains { $0.hasPrefix("org.mpris.MediaPlayer2.") })
            // It keeps playing: the stream runs, the same node, and the player lives on.
            _ = try await sandbox.observer.waitUntil("the player's stream running") { graph in
                graph.nodes[stream.id]?.serial == stream.serial && graph.nodes[stream.id]?.state == .running
            }
            #expect(!player.hasExited)
            print("browser facts [paplay]: node \(Self.sorted(stream.props))")
            player.stop()
            #expect(player.exitStatus != nil)
        }
    }

    // MARK: Facts

    static func facts(kind: Browser.Kind, graph: Graph, stream: Node, name: String, owner: Int32, members: [ProcessEntry]) -> String {
        let client = graph.clients[stream.clientID ?? 0]?.props ?? [:]
        let tree = members.sorted { $0.pid < $1.pid }.map { "\($0.pid) \($0.parent) \($0.command)" }.joined(separator: "; ")
        let kibibytes = members.compactMap { proportionalKiB(of: $0.pid) }.reduce(0, +)
        return """
            browser facts [\(kind)]: node \(sorted(stream.props))
            browser facts [\(kind)]: client \(sorted(client))
            browser facts [\(kind)]: MPRIS \(name) owned by \(owner); \(members.count) processes, \(kibibytes / 1024) MiB (Pss) in all (pid ppid comm): \(tree)
            """
    }

    /// Pss of /proc/PID/smaps_rollup: each shared page counted once across the processes.
    static func proportionalKiB(of pid: Int32) -> Int? {
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8),
            let line = rollup.split(separator: "\n").first(where: { $0.hasPrefix("Pss:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    static func sorted(_ props: Properties) -> String {
        props.keys.sorted().map { "\($0)=\(props[$0] ?? "")" }.joined(separator: " ")
    }
}
