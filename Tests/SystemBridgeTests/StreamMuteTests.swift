import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A playback stream's mute (`Node.mute`, `setMute`) against a real PipeWire with WirePlumber,
/// for a native stream (pw-cat) and a PulseAudio client (paplay through pipewire-pulse): read,
/// set, heard at the sink, changed by another client. The round trips measured are printed
/// (`mute round trip`) for docs/pipewire-facts.md.
@Suite("Stream mute", .timeLimit(.minutes(3)), .blockingCalls)
struct StreamMuteTests {
    static let sink = VirtualSink.speakers()

    @Test("a pw-cat stream: mute read, set both ways, silent at the sink, pactl agrees, another client's change seen")
    func nativeStream() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [Self.sink])) { sandbox in
            // pipewire-pulse lists native streams too: pactl must agree on them as well.
            try sandbox.startPulseServer()
            let tone = try sandbox.toneFile()
            let (_, stream) = try await sandbox.startPlayback("pw-cat", ["pw-cat", "--playback", "--media-role", "Music", tone])
            try await Self.exercise(stream, in: sandbox, label: "pw-cat", pactl: true) { mute in
                let result = try sandbox.run(["pw-cli", "set-param", String(stream.id), "Props", "{ mute: \(mute) }"])
                #expect(result.status == 0, "pw-cli set-param: \(result.output)")
            }
        }
    }

    @Test("a paplay stream through pipewire-pulse: the same, and pactl says Mute: yes / no")
    func pulseStream() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [Self.sink])) { sandbox in
            try sandbox.startPulseServer()
            let tone = try sandbox.toneFile()
            let (_, stream) = try await sandbox.startPlayback("paplay", ["paplay", "--client-name=earshot-mute-test", tone])
            try await Self.exercise(stream, in: sandbox, label: "paplay", pactl: true) { mute in
                let index = try #require(try sandbox.sinkInput(ofNode: stream.id)?.index)
                let result = try sandbox.run(["pactl", "set-sink-input-mute", index, mute ? "1" : "0"])
                #expect(result.status == 0, "pactl set-sink-input-mute: \(result.output)")
            }
        }
    }

    @Test("setMute refuses what is not a playback stream")
    func refusesOtherNodes() async throws {
        try await withSandbox(.init(sinks: [Self.sink])) { sandbox in
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            let sink = try #require(connection.snapshot().node(named: Self.sink.name))
            #expect(sink.mute == nil, "a sink's Props are not followed")
            await #expect(throws: PipeWireError.self) { try await connection.setMute(true, ofNode: sink.id) }
            await #expect(throws: PipeWireError.noSuchObject(999_999)) { try await connection.setMute(true, ofNode: 999_999) }
        }
    }

    @Test("a stopped player holds only its own mute: the call times out, the connection and other streams go on, and the mute lands when it wakes")
    func stoppedPlayer() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [Self.sink])) { sandbox in
            let silence = try sandbox.silenceFile()
            let (sleeper, a) = try await sandbox.startPlayback("pw-cat-a", ["pw-cat", "--playback", silence])
            let (_, b) = try await sandbox.startPlayback("pw-cat-b", ["pw-cat", "--playback", silence])
            let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
            defer { connection.close() }
            #expect(connection.snapshot().nodes[a.id]?.mute == false && connection.snapshot().nodes[b.id]?.mute == false)

            sleeper.signal(SIGSTOP)
            let asked = ContinuousClock.now
            do throws(PipeWireError) {
                try await connection.setMute(true, ofNode: a.id, timeout: .milliseconds(500))
                Issue.record("a stopped player took the mute")
            } catch {
                guard case .timedOut = error else { throw error }
            }
            print("mute of a stopped player: timed out after \(asked.duration(to: .now))")
            // This connection answers at once, and the other player's stream is muted.
            try await connection.sync(timeout: .seconds(2))
            _ = try await Self.set(true, b.id, on: connection)
            #expect(connection.snapshot().nodes[a.id]?.mute == false)

            // Woken, the player takes the request PipeWire handed it; a new channel serves it again.
            sleeper.signal(SIGCONT)
            _ = try await connection.waitUntil("stream \(a.id) muted once its player woke") { $0.nodes[a.id]?.mute == true }
            _ = try await Self.set(false, a.id, on: connection)
        }
    }

    /// The whole sequence on one stream: read (false), set true (graph, sink, a new connection's
    /// first graph, pactl), set false, another client's true and false; then round trips measured.
    static func exercise(
        _ stream: Node, in sandbox: PipeWireSandbox, label: String, pactl: Bool = false,
        otherClientSets: (Bool) throws -> Void
    ) async throws {
        let id = stream.id
        let connection = try await PipeWireConnection.connect(remote: sandbox.socketPath)
        defer { connection.close() }
        // The stream's Props come with `ready` (the third round trip of connect).
        #expect(connection.snapshot().nodes[id]?.mute == false)
        let meter = try SinkMeter(sandbox, sink: sink.name)
        try meter.wait(for: .audible, after: 0)

        let muted = try await set(true, id, on: connection)
        let silentAt = try meter.wait(for: .silent, after: muted.sent)
        print("mute round trip [\(label)]: first set → graph \(muted.shown) µs (setMute returned after \(muted.returned) µs, a new channel); set → silence read at the sink monitor \((silentAt - muted.sent) / 1000) µs")
        if pactl { try await waitForPactl(sandbox, id, muted: true) }
        let fresh = try await PipeWireConnection.connect(remote: sandbox.socketPath)
        #expect(fresh.snapshot().nodes[id]?.mute == true, "a new connection knows the mute at ready")
        fresh.close()

        let unmuted = try await set(false, id, on: connection)
        try meter.wait(for: .audible, after: unmuted.sent)
        if pactl { try await waitForPactl(sandbox, id, muted: false) }

        try otherClientSets(true)
        let seenMuted = try await connection.waitUntil("another client's mute of \(id)") { $0.nodes[id]?.mute == true }
        #expect(seenMuted.nodes[id]?.mute == true)
        try meter.wait(for: .silent, after: unmuted.sent)
        try otherClientSets(false)
        _ = try await connection.waitUntil("another client's unmute of \(id)") { $0.nodes[id]?.mute == false }
        try meter.wait(for: .audible, after: MonotonicClock.nanoseconds())

        // The round trip, measured: set → the graph shows it, ten times each way.
        var times: [UInt64] = [], returns: [UInt64] = []
        for round in 0..<20 {
            let result = try await set(round % 2 == 0, id, on: connection)
            times.append(result.shown)
            returns.append(result.returned)
        }
        times.sort()
        returns.sort()
        print("mute round trip [\(label)]: set → graph over \(times.count): median \(times[times.count / 2]) µs, min \(times[0]) µs, max \(times[times.count - 1]) µs; setMute returned: median \(returns[returns.count / 2]) µs, max \(returns[returns.count - 1]) µs")
        #expect(connection.snapshot().nodes[id]?.mute == false)
    }

    /// Sets the mute and waits for the graph to show it; returns when it was sent, how long (µs)
    /// until the change came (stamped on the loop thread as it arrived) and until `setMute`
    /// returned.
    static func set(_ mute: Bool, _ id: ObjectID, on connection: PipeWireConnection) async throws -> (sent: UInt64, shown: UInt64, returned: UInt64) {
        let arrival = Stamp()
        let armed = try connection.arm("node \(id) mute \(mute)") { graph in
            guard graph.nodes[id]?.mute == mute else { return false }
            arrival.set(MonotonicClock.nanoseconds())
            return true
        }
        let sent = MonotonicClock.nanoseconds()
        try await connection.setMute(mute, ofNode: id)
        let returned = MonotonicClock.nanoseconds()
        let graph = try await armed.value(timeout: .seconds(10))
        #expect(graph.nodes[id]?.mute == mute)
        let shown = try #require(arrival.value)
        #expect(shown >= sent, "the graph showed mute=\(mute) before it was set")
        return (sent, (shown - sent) / 1000, (returned - sent) / 1000)
    }

    /// pipewire-pulse learns a stream's mute on its own: ask pactl until it agrees (each run is
    /// the backoff), up to a deadline.
    static func waitForPactl(_ sandbox: PipeWireSandbox, _ id: ObjectID, muted: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try sandbox.sinkInput(ofNode: id)?.muted != muted {
            guard ContinuousClock.now < deadline else {
                Issue.record("pactl never said Mute: \(muted ? "yes" : "no") for node \(id)")
                return
            }
        }
    }
}

/// A time taken on the loop thread, read by the test.
final class Stamp: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: UInt64?
    var value: UInt64? { lock.withLock { stored } }
    func set(_ time: UInt64) { lock.withLock { if stored == nil { stored = time } } }
}
