import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import Synchronization
import SystemBridge
import TestScheduling
import Testing

/// What differs between PipeWire 0.3.65 + WirePlumber 0.4.13 and 1.4.2 + 0.5.8, run on both
/// (scripts/test): sinks that cannot be linked, and WirePlumber 0.5's default history.
@Suite("Stack differences", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct StackDifferencesTests {
    typealias D = DaemonFixture

    /// A null sink as a sandbox without a session manager would make it before the fixtures
    /// learnt better: auto-port-config without a format and rate (on 1.4 one `playback_1` port
    /// no link can use; on 0.3.65 real FL/FR ports), or no port config at all (no ports).
    static func unusableSink(portConfig: Bool) -> String {
        "{ factory.name=support.null-audio-sink node.name=\"\(D.speakers)\" media.class=Audio/Sink object.linger=true"
            + " audio.position=[FL,FR] device.form-factor=internal device.bus=pci"
            + (portConfig ? " adapter.auto-port-config={ mode=dsp monitor=true position=preserve }" : "") + " }"
    }

    /// utime + stime of a process, in clock ticks.
    static func cpuTicks(of pid: pid_t) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which is in parentheses and may hold spaces).
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    @Test("standalone: a stream that cannot be linked is reported once and costs no CPU while nothing changes", arguments: [true, false])
    func noHotLoop(portConfig: Bool) async throws {
        try await withSandbox(.init()) { sandbox in
            let created = try await offPool { try sandbox.run(["pw-cli", "create-node", "adapter", Self.unusableSink(portConfig: portConfig)]) }
            #expect(created.status == 0, "\(created.output)")
            _ = try await sandbox.observer.waitUntil("the sink") { $0.node(named: D.speakers) != nil }
            let daemon = try await D.startOffPool(in: sandbox)
            defer { daemon.process.stop() }
            guard portConfig else {
                // Without any port config the sink has no input ports: it is out (§1 no-ports,
                // issue 19) rather than chosen with every stream silent, and nothing spins.
                // The first decision is made in the same turn as this line; status comes after.
                try await daemon.process.waitForLog(containing: "connected to PipeWire")
                let before = try Self.cpuTicks(of: daemon.process.pid)
                let status = try await offPool { try daemon.earshot("status", "--explain").output }
                #expect(status.contains("no input ports"), "\(status)")
                #expect(status.contains("default: (none)"), "\(status)")
                try await Task.sleep(for: .seconds(5))  // the measurement window, not a synchronisation
                let ticks = try Self.cpuTicks(of: daemon.process.pid) - before
                #expect(ticks <= 15, "\(ticks) ticks of CPU in 5 s")
                return
            }
            let (player, _) = try await sandbox.startPlayer()
            defer { player.stop() }
            let before = try Self.cpuTicks(of: daemon.process.pid)
            // The measurement window (not a synchronisation): what the daemon spends while
            // nothing changes.
            try await Task.sleep(for: .seconds(10))
            let ticks = try Self.cpuTicks(of: daemon.process.pid) - before
            let log = daemon.process.logTail(lines: 100_000)
            let failures = log.split(separator: "\n").filter { $0.contains("cannot link stream") }.count
            let linked = !sandbox.observer.snapshot().outgoingLinks(of: sandbox.observer.snapshot().playbackStreams.first?.id ?? 0).isEmpty
            #expect(failures <= 2, "reported \(failures) times in 10 s")
            #expect(ticks <= 30, "\(ticks) ticks of CPU in 10 s (a retry loop took 400+)")
            print("unusable sink (port config: \(portConfig)): linked \(linked), \(failures) report(s), \(ticks) CPU ticks in 10 s")
        }
    }

    @Test("cooperative: the worn headphones' sink vanishes → the output ends on the policy's choice, with no back-and-forth in the metadata")
    func defaultHistoryFallback() async throws {
        let sinks: [VirtualSink] = [
            .speakers(), .headphones(),
            VirtualSink(name: "alsa_output.usb-desk.analog-stereo", description: "Desk USB", formFactor: "speaker", bus: "usb"),
        ]
        try await withSandbox(.init(wirePlumber: true, sinks: sinks)) { sandbox in
            let (_, mpv) = try await sandbox.startPlayer()
            // The user's history: the desk speakers, then the internal speakers (WirePlumber 0.5
            // remembers both as configured defaults it can fall back to).
            for sink in [sinks[2].name, D.speakers] {
                let node = try #require(sandbox.observer.snapshot().node(named: sink))
                let picked = try await offPool { try sandbox.run(["wpctl", "set-default", String(node.id)]) }
                #expect(picked.status == 0)
                _ = try await sandbox.observer.waitUntil("\(sink) configured") { $0.configuredDefaultSinkName == sink }
            }
            let daemon = try await D.startOffPool(in: sandbox)
            defer { daemon.process.stop() }
            try daemon.register(placement: "on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])

            final class Seen: Sendable { let values = Mutex<[String]>([]) }
            let seen = Seen()
            let recorder = try sandbox.observer.arm("every default after the vanish (never fulfilled)") { graph in
                let value = "configured \(graph.configuredDefaultSinkName ?? "-"), effective \(graph.effectiveDefaultSinkName ?? "-")"
                seen.values.withLock { if $0.last != value { $0.append(value) } }
                return false
            }
            _ = recorder
            try await sandbox.removeSink(named: D.headphones)
            let session = try DaemonSession(path: daemon.socketPath)
            let decided = try await daemon.settle(session, effectiveToo: true)
            #expect(decided == D.speakers, "the policy gives the output back to the speakers (docs/policy.md §4)")
            let values = seen.values.withLock { $0 }
            let configured = values.compactMap { $0.split(separator: ",").first.map(String.init) }
            // At most: the vanished sink still configured, then the decision; never a third value.
            #expect(Set(configured).subtracting(["configured \(D.headphones)", "configured \(decided)"]).isEmpty, "\(values)")
            #expect(configured.last == "configured \(decided)", "\(values)")
        }
    }
}
