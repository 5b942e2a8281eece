import WireFields
import ControlProtocol
import AudioGraph
import Logging
import RoutingPolicy

/// What a departing headset leaves behind (docs/policy.md §7): the players playing on it are
/// paused before a decision is applied (so they stop before their audio reaches the new
/// default), and what no pause stopped is held silent (muted); both are given back after the
/// headset returns. `PlaybackPolicy` decides, the media players and `StreamMuting` act; this
/// part owns both, where each stream last played, and what it holds.
/// A class: its async steps run on the daemon's actor (`nonisolated(nonsending)`), between
/// which the daemon takes no other input.
final class PlaybackHook: GraphChangeObserver {
    /// nil without a session bus: then no player is paused (streams are still held).
    var players: (any MediaPlayerControl)?
    private var policy = PlaybackPolicy()
    private var lastPlayed = LastPlayedSinks()
    private(set) var holds = StreamHolds()
    /// The holds changed since the state was last saved.
    var holdsChanged = false

    /// A new connection's graph: where each stream plays now.
    func rebuild(from graph: Graph) { lastPlayed.rebuild(from: graph) }

    /// Links made and objects gone: where each stream plays; nodes and stream targets: a held
    /// stream someone else unmuted or moved is theirs again.
    var observedKinds: GraphChangeKinds { [.link, .removed, .node, .metadataProperty] }

    /// Each change, taken before the next one of the burst can hide where a stream played.
    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        lastPlayed.record(change, in: turn.graph, at: turn.now)
        if holds.note(change, in: turn.graph) { holdsChanged = true }
        return nil
    }

    func playerStatusChanged(connection: String, to status: String, signal: UInt64) {
        policy.playerStatusChanged(connection: connection, to: status, signal: signal)
        if status == "Playing" { holds.playerPlays(connection, signal: signal) }
    }

    /// What `decision` means for what plays: pauses and holds to make now, resumes and releases
    /// to make after applying.
    func cues(for decision: Decision, after previous: Decision?, config: PlaybackConfig) -> [PlaybackPolicy.Cue] {
        policy.react(to: decision, after: previous, config: config)
    }

    /// Pauses the players playing on each departing sink, read from the graph before anything
    /// relinks their streams, then mutes what still plays there and no pause stopped. Returns
    /// the changes to publish.
    nonisolated(nonsending) func pause(
        for cues: [PlaybackPolicy.Cue], at decisionTime: Milliseconds, graph: Graph, config: PolicyConfig, muting: (any StreamMuting)?,
        wallClock: Int64
    ) async -> [ControlWire.PlaybackEvent] {
        var changes: [ControlWire.PlaybackEvent] = []
        for case .pause(let departure) in cues {
            let streams = lastPlayed.streams(playingOn: departure.sink, in: graph, movedOffSince: departure.movedOffSince)
            guard !streams.isEmpty else { continue }
            var outcome = PauseOutcome()
            let clients = streams.compactMap { StreamClient(of: $0, in: graph) }
            if let players, !clients.isEmpty { outcome = await players.pause(streams: clients) }
            if !outcome.paused.isEmpty {
                policy.record(outcome.paused, for: departure, at: decisionTime, config: config.playback)
                changes.append(Self.change(.paused, departure.reason, outcome.paused, sink: departure.sink, accessory: departure.accessory, at: wallClock))
            }
            guard config.playback.holdUnpausable == .mute, let muting else { continue }
            let candidates = Array(HoldSelection.streams(streams, stopped: outcome.stopped, in: graph, input: config.input).prefix(holds.room))
            // A paused player's stream still running: what it sent before it said Paused is in
            // flight (Chromium goes quiet 25–120 ms after the call): muted until it falls silent.
            let playerOf = Dictionary(outcome.paused.flatMap { player in player.streams.map { ($0, player) } }, uniquingKeysWith: { a, _ in a })
            let draining = HoldSelection.streams(streams.filter { outcome.stopped.contains($0.id) }, stopped: [], in: graph, input: config.input)
                .prefix(max(0, holds.room - candidates.count))
            guard !candidates.isEmpty || !draining.isEmpty else { continue }
            let muted = await muting.setMute(true, ofStreams: candidates.map(\.id) + draining.map(\.id))
            let held = candidates.filter { muted.contains($0.id) }.map { HeldStream($0, sink: departure.sink, accessory: departure.accessory) }
            let drained = draining.filter { muted.contains($0.id) }.map { stream in
                var entry = HeldStream(stream, sink: departure.sink, accessory: departure.accessory, player: playerOf[stream.id].map { $0.connection ?? $0.busName } ?? "")
                entry.pausedAfterSignal = playerOf[stream.id]?.pausedAfterSignal ?? 0
                return entry
            }
            for entry in held + drained { holds.add(entry) }
            guard !held.isEmpty || !drained.isEmpty else { continue }
            holdsChanged = true
            policy.recordHeld(for: departure, at: decisionTime)
            guard !held.isEmpty else { continue }
            changes.append(Self.change(.held, departure.reason, streams: held, sink: departure.sink, accessory: departure.accessory, at: wallClock))
        }
        return changes
    }

    /// Resumes the players of each resume cue (the output is back on the accessory), and lets
    /// its held streams go once they play there again (`releaseDue`).
    nonisolated(nonsending) func resume(for cues: [PlaybackPolicy.Cue], wallClock: Int64) async -> [ControlWire.PlaybackEvent] {
        var changes: [ControlWire.PlaybackEvent] = []
        for case .resume(let resume) in cues {
            holds.release(resume.accessory)
            guard let players, !resume.players.isEmpty else { continue }
            let resumed = await players.resume(resume.players)
            guard !resumed.isEmpty else { continue }
            changes.append(Self.change(.resumed, resume.reason, resumed, sink: resume.sink, accessory: resume.accessory, at: wallClock))
        }
        return changes
    }

    /// Unmutes the released streams that play on their headset again (checked after every
    /// turn: the session manager may move them a moment after the default).
    nonisolated(nonsending) func releaseDue(
        in graph: Graph, muting: (any StreamMuting)?, wallClock: Int64, logger: Logger
    ) async -> [ControlWire.PlaybackEvent] {
        // A stream that started muted under a key of Earshot's holds: the session manager gave
        // it the mute Earshot set on another stream of its key. It is the user's: unmuted.
        let startedMuted = holds.takeStartedMuted(in: graph)
        if !startedMuted.isEmpty, let muting {
            holdsChanged = true
            let unmuted = await muting.setMute(false, ofStreams: startedMuted)
            for id in startedMuted where unmuted.contains(id) {
                logger.info("playback: stream \(id) (\(graph.nodes[id]?.props["application.name"] ?? "?")) started muted by the session manager's memory of Earshot's hold: unmuted")
            }
        }
        let due = holds.due(in: graph)
        guard !due.isEmpty else { return [] }
        holdsChanged = true
        return await unmute(due, reason: .accessoryReturned, muting: muting, wallClock: wallClock)
    }

    /// Unmutes every stream still held and untouched: the daemon stops (`stopped`), or starts
    /// after one that ended while holding them (`restarted`).
    nonisolated(nonsending) func releaseAll(
        in graph: Graph, reason: PlaybackReason, muting: (any StreamMuting)?, wallClock: Int64
    ) async -> [ControlWire.PlaybackEvent] {
        let all = holds.takeAll(in: graph, keepingKeys: reason == .restarted)
        holdsChanged = true
        return await unmute(all, reason: reason, muting: muting, wallClock: wallClock)
    }

    /// What `status` says of it; nil when nothing is paused or held.
    var status: ControlWire.PlaybackStatus? {
        let paused = policy.pausedGroups.flatMap { accessory, group in
            group.players.map { ControlWire.PausedPlayer(player: $0.busName, match: $0.match.rawValue, sink: group.sink, accessory: accessory.description) }
        }
        let held = holds.all.filter { !$0.isDrain }.map { ControlWire.HeldEntry(stream: $0.wire, sink: $0.sink, accessory: $0.accessory.description) }
        guard !paused.isEmpty || !held.isEmpty else { return nil }
        return ControlWire.PlaybackStatus(paused: paused, held: held)
    }

    /// Held streams restored from the state file (a daemon that ended while holding them).
    func restore(_ held: [HeldStream], orphanKeys: Set<String>) {
        holds = StreamHolds(held, orphanKeys: orphanKeys)
    }

    private nonisolated(nonsending) func unmute(
        _ streams: [HeldStream], reason: PlaybackReason, muting: (any StreamMuting)?, wallClock: Int64
    ) async -> [ControlWire.PlaybackEvent] {
        guard !streams.isEmpty else { return [] }
        let unmuted = await muting?.setMute(false, ofStreams: streams.map(\.stream)) ?? []
        // One not unmuted (its client did not answer, or the connection closed under it: a stop
        // racing a release) is held again: kept in the state file, given back by the next
        // return, stop or start.
        for var entry in streams where !unmuted.contains(entry.stream) {
            entry.releasing = false
            entry.silent = false
            holds.add(entry)
            holdsChanged = true
        }
        var changes: [ControlWire.PlaybackEvent] = []
        // A drain is part of a pause, not a hold of its own: it is given back unsaid.
        let told = streams.filter { unmuted.contains($0.stream) && !$0.isDrain }
        for (sink, group) in Dictionary(grouping: told, by: \.sink).sorted(by: { $0.key < $1.key }) {
            changes.append(Self.change(.released, reason, streams: group, sink: sink, accessory: group[0].accessory, at: wallClock))
        }
        return changes
    }

    private static func change(
        _ action: ControlWire.PlaybackEvent.Action, _ reason: PlaybackReason, _ players: [MediaPlayer] = [], streams: [HeldStream] = [],
        sink: String, accessory: AccessoryIdentity, at wallClock: Int64
    ) -> ControlWire.PlaybackEvent {
        ControlWire.PlaybackEvent(
            at: wallClock, action: action, reason: reason, players: players.map(\.busName).sorted(), sink: sink.isEmpty ? nil : sink,
            accessory: accessory.description, matches: Dictionary(players.map { ($0.busName, $0.match.rawValue) }, uniquingKeysWith: { a, _ in a }),
            streams: streams.map(\.wire))
    }
}

/// Mutes and unmutes playback streams (their `Props` `mute`, as `pactl set-sink-input-mute`
/// does), and says which ones the graph shows done.
protocol StreamMuting: Sendable {
    func setMute(_ mute: Bool, ofStreams ids: [ObjectID]) async -> Set<ObjectID>
}
