import Foundation
import PipeWireTestSupport
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

/// A player's MPRIS object on the sandbox's bus, for pausing it by hand: when its `Pause`
/// returns, when it says `Paused` (its PropertiesChanged, stamped on the bus thread).
final class MPRISProbe: @unchecked Sendable {
    static let path = "/org/mpris/MediaPlayer2"
    static let interface = "org.mpris.MediaPlayer2.Player"
    let bus: DBusConnection
    let name: String
    private let lock = NSLock()
    private var paused: UInt64?

    private init(bus: DBusConnection, name: String) {
        self.bus = bus
        self.name = name
    }

    /// The MPRIS name whose owner `owns` (by pid), with its status signals followed.
    static func find(_ sandbox: PipeWireSandbox, owns: @Sendable (Int32) -> Bool) async throws -> MPRISProbe {
        guard let address = sandbox.environment["DBUS_SESSION_BUS_ADDRESS"] else { throw BenchError("the sandbox has no session bus") }
        let bus = try DBusConnection(.address(address))
        func daemonCall(_ member: String, _ argument: String? = nil) async throws -> [DBusValue] {
            try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
                argument.map { [DBusValue.string($0)] } ?? [])
        }
        do {
            let names = try await daemonCall("ListNames").first?.stringList ?? []
            for name in names where name.hasPrefix("org.mpris.MediaPlayer2.") {
                guard let pid = try? await daemonCall("GetConnectionUnixProcessID", name).first?.integer, owns(Int32(pid)),
                    let owner = try await daemonCall("GetNameOwner", name).first?.string
                else { continue }
                let probe = MPRISProbe(bus: bus, name: name)
                try await bus.addMatch(
                    "type='signal',sender='\(owner)',path='\(path)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
                ) { signal in
                    let now = monotonicNanos()
                    guard signal.arguments.dropFirst().first?.dictionary?["PlaybackStatus"]?.string == "Paused" else { return }
                    probe.lock.withLock { if probe.paused == nil { probe.paused = now } }
                }
                return probe
            }
        } catch {
            bus.close()
            throw error
        }
        bus.close()
        throw BenchError("no MPRIS name owned by the player")
    }

    /// Calls `Pause`; returns when it was sent and when its reply came.
    func pause() async throws -> (sent: UInt64, replied: UInt64) {
        lock.withLock { paused = nil }
        let sent = monotonicNanos()
        _ = try await bus.call(destination: name, path: Self.path, interface: Self.interface, member: "Pause")
        return (sent, monotonicNanos())
    }

    /// When it said `Paused` since the last `pause()`.
    var pausedAt: UInt64? { lock.withLock { paused } }

    func play() async throws {
        _ = try await bus.call(destination: name, path: Self.path, interface: Self.interface, member: "Play")
    }

    func close() { bus.close() }
}

/// MPRIS Pause by hand with no daemon running, the player on the headphones: how long its audio
/// goes on after the call, and after it says `Paused` (what a pause alone leaves to be heard).
struct DrainRun: Codable {
    var kind: LeakKind
    var run: Int
    /// From the call's send: its reply, the `Paused` signal, the last audible window read from
    /// the headphones' monitor (≈ 10–20 ms after the sound, as in the leak runs).
    var replyMillis: Double
    var pausedMillis: Double?
    var lastAudibleMillis: Double?
}

extension LeakBench {
    func drain(_ probe: MPRISProbe, run: Int) async throws -> DrainRun {
        try await waitPlayingOnHeadphones()
        let start = headphones.count
        let (sent, replied) = try await probe.pause()
        let threshold = options.peakThreshold
        // Silent for 500 ms after the call: the audio has stopped.
        try headphones.wait("\(player.kind) silent after Pause", timeout: .seconds(20)) { peaks in
            peaks.count - start >= 50 && peaks.suffix(50).allSatisfy { $0 <= threshold }
        }
        let heard = headphones.windows(start..<headphones.count).last { $0.peak > threshold }
        func millis(_ at: UInt64?) -> Double? { at.map { Double(Int64(bitPattern: $0 &- sent)) / 1e6 } }
        let result = DrainRun(
            kind: player.kind, run: run, replyMillis: millis(replied) ?? .nan, pausedMillis: millis(probe.pausedAt),
            lastAudibleMillis: millis(heard?.arrival))
        try await probe.play()
        return result
    }
}
