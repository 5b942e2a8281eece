import AudioGraph
import Logging
import RoutingPolicy
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
    /// How long a player that accepted Pause has to report `Paused` before its streams are
    /// held silent anyway (some answer before they stop: WirePlumber waits a whole second).
    static let confirmBound: Duration = .milliseconds(300)
    /// The most MPRIS names looked at per pause.
    static let playerLimit = 256

    private let bus: DBusConnection
    private let logger: Logger
    private let processes: any ProcessLookup
    /// Pauses waiting for their player's `Paused`.
    private let waiters = StatusWaiters()
    /// Status signals received so far, numbered on the bus thread in the order they came: one
    /// sender's signals and replies reach us in the order it sent them, so a signal numbered
    /// at or below the count read after a Pause reply was sent before the player paused.
    private let signalsReceived = Atomic<UInt64>(0)

    private init(bus: DBusConnection, logger: Logger, processes: any ProcessLookup) {
        self.bus = bus
        self.logger = logger
        self.processes = processes
    }

    /// Hands the players to `daemon` and forwards their PlaybackStatus changes to it (a player
    /// the user plays or stops after Earshot paused it is the user's again).
    static func start(
        on bus: DBusConnection, for daemon: Daemon, logger: Logger, processes: any ProcessLookup = ProcFileSystem()
    ) async -> MPRISPlayers {
        let players = MPRISPlayers(bus: bus, logger: logger, processes: processes)
        let rule = "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='\(objectPath)',arg0='\(playerInterface)'"
        do {
            try await bus.addMatch(rule) { signal in
                // On the bus thread: hop to the daemon actor.
                guard let sender = signal.sender, let status = signal.arguments.dropFirst().first?.dictionary?["PlaybackStatus"]?.string
                else { return }
                let number = players.signalsReceived.add(1, ordering: .sequentiallyConsistent).newValue
                players.waiters.announce(sender, status: status)
                Task { await daemon.playerStatusChanged(connection: sender, to: status, signal: number) }
            }
        } catch {
            logger.warning("MPRIS: cannot follow players' status (\(error)); a player played by hand meanwhile may be resumed")
        }
        await daemon.attachMediaPlayers(players)
        return players
    }

    func pause(streams: [StreamClient]) async -> PauseOutcome {
        guard !streams.isEmpty else { return PauseOutcome() }
        let names = await playerNames()
        // Who owns each name, read at once; then matched here, in one pass, with one process
        // table read (each chain is walked once per decision).
        let owners = await withTaskGroup(of: (String, Int32?, String?).self) { group in
            for name in names { group.addTask { (name, await self.processID(of: name), await self.owner(of: name)) } }
            return await group.reduce(into: [(name: String, pid: Int32, connection: String?)]()) { result, entry in
                if let pid = entry.1 { result.append((entry.0, pid, entry.2)) }
            }
        }
        var matcher = PlayerMatcher(processes: processes)
        var candidates: [MediaPlayer] = []
        for owner in owners.sorted(by: { $0.name < $1.name }) {
            let process = PlayerProcess(pid: owner.pid, startTime: processes.process(owner.pid)?.startTime, flatpak: processes.flatpak(of: owner.pid))
            var matched: [ObjectID] = []
            var best: PlayerMatchKind?
            for stream in streams {
                guard let kind = matcher.match(stream, process) else { continue }
                matched.append(stream.stream)
                if best.map({ kind.closeness < $0.closeness }) ?? true { best = kind }
            }
            guard let best else { continue }
            candidates.append(
                MediaPlayer(
                    busName: owner.name, processID: owner.pid, connection: owner.connection, startTime: process.startTime, match: best,
                    streams: matched))
        }
        let results = await withTaskGroup(of: (MediaPlayer, confirmed: Bool)?.self) { group in
            for candidate in candidates {
                group.addTask {
                    guard await self.status(of: candidate.busName) == "Playing" else { return nil }
                    // Listened for before Pause is sent: the answer may come before its reply.
                    let waiter = candidate.connection.map { self.waiters.expect($0, status: "Paused") }
                    guard await self.command("Pause", candidate.busName) else {
                        waiter.map { self.waiters.cancel($0) }
                        return nil
                    }
                    var player = candidate
                    player.pausedAfterSignal = self.signalsReceived.load(ordering: .sequentiallyConsistent)
                    if await self.status(of: candidate.busName) == "Paused" {
                        waiter.map { self.waiters.cancel($0) }
                        return (player, true)
                    }
                    guard let waiter else { return (player, false) }
                    return (player, await self.waiters.wait(waiter, within: Self.confirmBound))
                }
            }
            return await group.reduce(into: [(MediaPlayer, confirmed: Bool)]()) { result, entry in entry.map { result.append($0) } }
        }
        var outcome = PauseOutcome()
        for (player, confirmed) in results.sorted(by: { $0.0.busName < $1.0.busName }) {
            outcome.paused.append(player)
            if confirmed {
                outcome.stopped.formUnion(player.streams)
            } else {
                outcome.unconfirmed.append(player.busName)
                logger.warning("MPRIS: \(player.busName) accepted Pause but did not report Paused within \(Self.confirmBound): its streams are held")
            }
        }
        return outcome
    }

    func resume(_ players: [MediaPlayer]) async -> [MediaPlayer] {
        await withTaskGroup(of: MediaPlayer?.self) { group in
            for player in players {
                group.addTask {
                    guard await self.processID(of: player.busName) == player.processID,
                        player.startTime == nil || self.processes.process(player.processID)?.startTime == player.startTime,
                        await self.status(of: player.busName) == "Paused",
                        await self.command("Play", player.busName)
                    else { return nil }
                    return player
                }
            }
            return await group.reduce(into: []) { result, player in player.map { result.append($0) } }
        }
    }

    /// Every MPRIS name on the bus now (at most `playerLimit`: a bus flooded with names costs
    /// a bounded number of calls).
    private func playerNames() async -> [String] {
        do {
            let names = try await busCall("ListNames").first?.stringList ?? []
            return Array(names.filter { $0.hasPrefix(Self.namePrefix) }.sorted().prefix(Self.playerLimit))
        } catch {
            logger.warning("MPRIS: cannot list bus names: \(error)")
            return []
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
