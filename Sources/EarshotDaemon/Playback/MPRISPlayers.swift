import Logging
import Synchronization
import SystemBridge

/// MPRIS media players on the session bus: finds the players a set of processes runs, reads
/// their PlaybackStatus, pauses and plays them, and reports status changes to the daemon.
/// Thin: every decision is `PlaybackPolicy`'s.
final class MPRISPlayers: MediaPlayerControl {
    static let namePrefix = "org.mpris.MediaPlayer2."
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    /// A player that does not answer within this is skipped: a pause is awaited before the
    /// output moves, so one hung player must not hold the route change for long.
    static let callTimeout: Duration = .milliseconds(500)

    private let bus: DBusConnection
    private let logger: Logger
    /// Status signals received so far, numbered on the bus thread in the order they came: one
    /// sender's signals and replies reach us in the order it sent them, so a signal numbered
    /// at or below the count read after a Pause reply was sent before the player paused.
    private let signalsReceived = Atomic<UInt64>(0)

    private init(bus: DBusConnection, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    /// Hands the players to `daemon` and forwards their PlaybackStatus changes to it (a player
    /// the user plays or stops after Earshot paused it is the user's again).
    static func start(on bus: DBusConnection, for daemon: Daemon, logger: Logger) async -> MPRISPlayers {
        let players = MPRISPlayers(bus: bus, logger: logger)
        let rule = "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='\(objectPath)',arg0='\(playerInterface)'"
        do {
            try await bus.addMatch(rule) { signal in
                // On the bus thread: hop to the daemon actor.
                guard let sender = signal.sender, let status = signal.arguments.dropFirst().first?.dictionary?["PlaybackStatus"]?.string
                else { return }
                let number = players.signalsReceived.add(1, ordering: .sequentiallyConsistent).newValue
                Task { await daemon.playerStatusChanged(connection: sender, to: status, signal: number) }
            }
        } catch {
            logger.warning("MPRIS: cannot follow players' status (\(error)); a player played by hand meanwhile may be resumed")
        }
        await daemon.attachMediaPlayers(players)
        return players
    }

    func pausePlaying(processIDs: Set<Int32>) async -> [MediaPlayer] {
        await forEachPlayer { name in
            guard let pid = await self.processID(of: name), processIDs.contains(pid), await self.status(of: name) == "Playing",
                await self.command("Pause", name)
            else { return nil }
            let answered = self.signalsReceived.load(ordering: .sequentiallyConsistent)
            return MediaPlayer(busName: name, processID: pid, connection: await self.owner(of: name), pausedAfterSignal: answered)
        }
    }

    func resume(_ players: [MediaPlayer]) async -> [MediaPlayer] {
        await withTaskGroup(of: MediaPlayer?.self) { group in
            for player in players {
                group.addTask {
                    guard await self.processID(of: player.busName) == player.processID, await self.status(of: player.busName) == "Paused",
                        await self.command("Play", player.busName)
                    else { return nil }
                    return player
                }
            }
            return await group.reduce(into: []) { result, player in player.map { result.append($0) } }
        }
    }

    /// Runs `body` for every MPRIS name on the bus at once; collects what it returns.
    private func forEachPlayer(_ body: @escaping @Sendable (String) async -> MediaPlayer?) async -> [MediaPlayer] {
        let names: [String]
        do {
            names = try await busCall("ListNames").first?.stringList ?? []
        } catch {
            logger.warning("MPRIS: cannot list bus names: \(error)")
            return []
        }
        return await withTaskGroup(of: MediaPlayer?.self) { group in
            for name in names where name.hasPrefix(Self.namePrefix) { group.addTask { await body(name) } }
            return await group.reduce(into: []) { result, player in player.map { result.append($0) } }
        }
    }

    private func processID(of name: String) async -> Int32? {
        guard let value = try? await busCall("GetConnectionUnixProcessID", name).first?.integer else { return nil }
        return Int32(exactly: value)
    }

    private func owner(of name: String) async -> String? {
        try? await busCall("GetNameOwner", name).first?.string
    }

    private func status(of name: String) async -> String? {
        let reply = try? await bus.call(
            destination: name, path: Self.objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(Self.playerInterface), .string("PlaybackStatus")], timeout: Self.callTimeout)
        return reply?.first?.unwrapped.string
    }

    /// Calls Pause or Play; false (logged) when the player refused or did not answer.
    private func command(_ member: String, _ name: String) async -> Bool {
        do {
            _ = try await bus.call(destination: name, path: Self.objectPath, interface: Self.playerInterface, member: member, timeout: Self.callTimeout)
            return true
        } catch {
            logger.warning("MPRIS: \(member) on \(name) failed: \(error)")
            return false
        }
    }

    private func busCall(_ member: String, _ argument: String? = nil) async throws(DBusError) -> [DBusValue] {
        try await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            argument.map { [DBusValue.string($0)] } ?? [], timeout: Self.callTimeout)
    }
}
