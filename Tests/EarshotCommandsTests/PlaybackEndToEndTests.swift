import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

@testable import EarshotCommands

/// MPRIS pause/resume with a real `earshot daemon`, real mpv + mpv-mpris players on the
/// sandbox's session bus, WirePlumber moving the streams, and `playerctl` reading them back.
@Suite("MPRIS pause/resume end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct PlaybackEndToEndTests {
    typealias D = DaemonFixture
    static let sinks: [VirtualSink] = [.speakers(), .headphones()]

    @Test("off the head: after the grace the players are paused and the output moves; back on within the window Earshot's pauses resume, but not a player paused by hand, nor one the user played meanwhile")
    func pauseAndResume() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks)) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 300\n")
            let players = try await MPRISNames(sandbox)
            let (mpvProcess, mpv) = try await sandbox.startPlayer(name: "mpv")
            let (otherProcess, other) = try await sandbox.startPlayer(name: "other")
            let (userProcess, user) = try await sandbox.startPlayer(name: "user")
            let streams = [mpv.id, other.id, user.id]
            let daemon = try D.start(in: sandbox)
            try daemon.register(placement: "on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: streams)
            let mpvName = try await players.name(of: mpvProcess.pid)
            let otherName = try await players.name(of: otherProcess.pid)
            let userName = try await players.name(of: userProcess.pid)
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Playing") == "Playing")
            #expect(try sandbox.run(["playerctl", "-p", short(otherName), "pause"]).status == 0)
            #expect(try await playerStatus(players, sandbox, otherName, becomes: "Paused") == "Paused")

            let events = try EventSubscription(socket: daemon.socketPath)
            let removedAt = Int64(Date().timeIntervalSince1970 * 1000)
            try daemon.place("off-head")
            let paused = try await events.next("playback")
            #expect(paused["action"] == .string("paused"))
            #expect(paused["reason"] == .string("accessory-removed"))
            #expect(paused["players"] == .array([mpvName, userName].sorted().map(JSONValue.string)))
            #expect(paused["sink"] == .string(D.headphones))
            #expect(paused["accessory"] == .string(D.address))
            // Not before the grace: the removal had to hold for off-grace-ms.
            #expect((paused["at"]?.integerValue ?? 0) - removedAt >= 300)
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Paused") == "Paused")
            try await daemon.waitForRoute(to: D.speakers, streams: streams)
            // The user plays one of them on the speakers, then pauses it: it is theirs now. (Its
            // Playing must reach the bus before the pause: mpv coalesces a quick play-pause.)
            let playing = try await players.statusSignal(from: userName, "Playing")
            #expect(try sandbox.run(["playerctl", "-p", short(userName), "play"]).status == 0)
            _ = try await playing.value
            #expect(try sandbox.run(["playerctl", "-p", short(userName), "pause"]).status == 0)

            try daemon.place("on-head")
            let resumed = try await events.next("playback")
            #expect(resumed["action"] == .string("resumed"))
            #expect(resumed["reason"] == .string("accessory-returned"))
            #expect(resumed["players"] == .array([.string(mpvName)]))
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Playing") == "Playing")
            #expect(try await playerStatus(players, sandbox, otherName, becomes: "Paused") == "Paused")
            #expect(try await playerStatus(players, sandbox, userName, becomes: "Paused") == "Paused", "\(daemon.process.logTail(lines: 60))")
            try await daemon.waitForRoute(to: D.headphones, streams: streams)
            // watch prints the same event as one line.
            #expect(ControlText.event(name: "playback", paused.objectFields).contains("paused \([mpvName, userName].sorted().joined(separator: ", "))  (accessory-removed)  sink \(D.headphones)"))
        }
    }

    @Test("after the resume window nothing is resumed; the headphones' sink disappearing pauses too")
    func windowAndSinkRemoval() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks)) { sandbox in
            // A zero window: any return comes after it.
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 0\n[playback]\nresume-window-ms = 0\n")
            let players = try await MPRISNames(sandbox)
            let (mpvProcess, mpv) = try await sandbox.startPlayer(name: "mpv")
            let daemon = try D.start(in: sandbox)
            try daemon.register(placement: "on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            let mpvName = try await players.name(of: mpvProcess.pid)
            let events = try EventSubscription(socket: daemon.socketPath)

            try daemon.place("off-head")
            let paused = try await events.next("playback")
            #expect(paused["action"] == .string("paused"))
            try daemon.place("on-head")
            let back = try await events.next("route-change")
            #expect(back["current"] == .string(D.headphones))
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Paused") == "Paused")

            #expect(try sandbox.run(["playerctl", "-p", short(mpvName), "play"]).status == 0)
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Playing") == "Playing")
            let signal = try await players.signal(
                "type='signal',interface='org.earshot.Earshot1',member='PlaybackChanged',path='/org/earshot/Earshot1'", "PlaybackChanged"
            ) { _ in true }
            try await sandbox.destroySink(named: D.headphones)
            let gone = try await events.next("playback")
            #expect(gone["action"] == .string("paused"))
            #expect(gone["reason"] == .string("sink-removed"))
            #expect(gone["players"] == .array([.string(mpvName)]))
            #expect(try await playerStatus(players, sandbox, mpvName, becomes: "Paused") == "Paused")
            #expect(!daemon.process.logTail(lines: 400).contains("playback resumed"))
            // The same on D-Bus (org.earshot.Earshot1 PlaybackChanged: action, reason, players, …).
            let arguments = try await signal.value.arguments
            #expect(arguments.prefix(3) == [.string("paused"), .string("sink-removed"), .strings([mpvName])])
        }
    }

    // MARK: Helpers

    private func short(_ busName: String) -> String { MPRISNames.short(busName) }

    private func playerStatus(_ players: MPRISNames, _ sandbox: PipeWireSandbox, _ busName: String, becomes expected: String) async throws -> String {
        try await players.status(of: busName, in: sandbox, becomes: expected)
    }
}

extension MPRISNames {
    static func short(_ busName: String) -> String { String(busName.dropFirst("org.mpris.MediaPlayer2.".count)) }

    /// `playerctl -p NAME status`, as a user would read it, once the player says `expected`
    /// (mpv applies Pause and Play a moment after answering them): read at once, and if it says
    /// something else, read again after the player announces `expected` (PropertiesChanged),
    /// which is listened for before the first read; at most 10 s. Returns what it said last.
    func status(of busName: String, in sandbox: PipeWireSandbox, becomes expected: String) async throws -> String {
        let announced = try await statusSignal(from: busName, expected)
        defer { announced.cancel() }
        let read = { try sandbox.run(["playerctl", "-p", Self.short(busName), "status"]).output.trimmingCharacters(in: .whitespacesAndNewlines) }
        let now = try read()
        guard now != expected else { return now }
        _ = try? await announced.value  // no announcement within the deadline: the read below says what it is
        return try read()
    }
}

/// The MPRIS bus names on the sandbox's session bus, by owning process.
struct MPRISNames {
    let bus: DBusConnection

    /// Create it before the players: it holds `org.mpris.MediaPlayer2.mpv` itself, so every
    /// mpv takes an instance name (`mpv.instance<pid>`), which `playerctl -p` tells apart
    /// (`-p mpv` would match every instance).
    init(_ sandbox: PipeWireSandbox) async throws {
        guard let address = sandbox.environment["DBUS_SESSION_BUS_ADDRESS"] else { throw FixtureError("the sandbox has no session bus") }
        bus = try DBusConnection(.address(address))
        try await bus.requestName("org.mpris.MediaPlayer2.mpv")
    }

    /// The MPRIS name `pid` owns (mpv-mpris takes it a moment after the stream appears): the
    /// names taken are listened for first, then the names already there are looked at, then
    /// each name taken afterwards, until `timeout`.
    func name(of pid: Int32, timeout: Duration = .seconds(10)) async throws -> String {
        let prefix = "org.mpris.MediaPlayer2.mpv.instance"
        let (taken, continuation) = AsyncStream.makeStream(of: String.self)
        try await bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'") { signal in
            let arguments = signal.arguments
            if arguments.count == 3, let name = arguments[0].string, name.hasPrefix(prefix), arguments[2].string?.isEmpty == false {
                continuation.yield(name)
            }
        }
        defer { continuation.finish() }
        for name in try await busCall("ListNames").first?.stringList ?? [] where name.hasPrefix(prefix) {
            if try await owner(of: name) == pid { return name }
        }
        return try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                for await name in taken where try await self.owner(of: name) == pid { return name }
                throw FixtureError("no more names")
            }
            group.addTask {
                try await Task.sleep(for: timeout)  // the deadline, not a synchronisation
                throw FixtureError("process \(pid) took no MPRIS name within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// The process that owns `name` (nil once it left the bus).
    private func owner(of name: String) async throws -> Int32? {
        guard let pid = try? await busCall("GetConnectionUnixProcessID", name).first?.integer else { return nil }
        return Int32(pid)
    }

    /// Starts waiting for a PropertiesChanged of `busName`'s PlaybackStatus to `status`.
    func statusSignal(from busName: String, _ status: String) async throws -> Task<DBusSignal, any Error> {
        guard let owner = try await busCall("GetNameOwner", busName).first?.string else { throw FixtureError("\(busName) has no owner") }
        let rule = "type='signal',sender='\(owner)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/mpris/MediaPlayer2'"
        return try await signal(rule, "\(busName) PlaybackStatus \(status)") {
            $0.arguments.dropFirst().first?.dictionary?["PlaybackStatus"]?.string == status
        }
    }

    /// Starts waiting for the first signal matching `rule` and `predicate`; the task returns
    /// it, or fails after `timeout`.
    func signal(
        _ rule: String, _ what: String, timeout: Duration = .seconds(10), _ predicate: @escaping @Sendable (DBusSignal) -> Bool
    ) async throws -> Task<DBusSignal, any Error> {
        let (signals, continuation) = AsyncStream.makeStream(of: DBusSignal.self)
        try await bus.addMatch(rule) { signal in
            if predicate(signal) { continuation.yield(signal) }
        }
        return Task {
            try await withThrowingTaskGroup(of: DBusSignal.self) { group in
                group.addTask {
                    for await signal in signals { return signal }
                    throw FixtureError("no more signals")
                }
                group.addTask {
                    try await Task.sleep(for: timeout)  // the deadline, not a synchronisation
                    throw FixtureError("no signal \(what) within \(timeout)")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        }
    }

    private func busCall(_ member: String, _ argument: String? = nil) async throws -> [DBusValue] {
        try await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            argument.map { [DBusValue.string($0)] } ?? [])
    }
}

extension JSONValue {
    var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var objectFields: [String: JSONValue] {
        if case .object(let fields) = self { return fields }
        return [:]
    }
}
