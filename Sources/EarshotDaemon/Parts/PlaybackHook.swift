import WireFields
import ControlProtocol
import AudioGraph
import Logging
import RoutingPolicy

/// MPRIS pause/resume around each decision (docs/policy.md §7): players are paused before a
/// decision is applied (so they stop before their audio reaches the new default) and resumed
/// after. `PlaybackPolicy` decides, the media players act; this part owns both, and where
/// each stream last played.
/// A class: its async steps run on the daemon's actor (`nonisolated(nonsending)`), between
/// which the daemon takes no other input.
final class PlaybackHook: GraphChangeObserver {
    /// nil without a session bus: then nothing is tracked or paused.
    var players: (any MediaPlayerControl)?
    private var policy = PlaybackPolicy()
    private var lastPlayed = LastPlayedSinks()

    /// A new connection's graph: where each stream plays now.
    func rebuild(from graph: Graph) { lastPlayed.rebuild(from: graph) }

    /// Links made and objects gone: where each stream plays.
    var observedKinds: GraphChangeKinds { [.link, .removed] }

    /// Each change, taken before the next one of the burst can hide where a stream played.
    func graphDidChange(_ change: GraphChange, in turn: GraphTurn) -> PolicyInput? {
        lastPlayed.record(change, in: turn.graph, at: turn.now)
        return nil
    }

    func playerStatusChanged(connection: String, to status: String, signal: UInt64) {
        policy.playerStatusChanged(connection: connection, to: status, signal: signal)
    }

    /// What `decision` means for the players: pauses to make now, resumes to make after applying.
    func cues(for decision: Decision, after previous: Decision?, config: PlaybackConfig) -> [PlaybackPolicy.Cue] {
        guard players != nil else { return [] }
        return policy.react(to: decision, after: previous, config: config)
    }

    /// Pauses the players playing on each paused sink, read from the graph before anything
    /// relinks their streams. Returns the changes to publish.
    nonisolated(nonsending) func pause(
        for cues: [PlaybackPolicy.Cue], at decisionTime: Milliseconds, graph: Graph, config: PlaybackConfig, wallClock: Int64
    ) async -> [ControlWire.PlaybackEvent] {
        guard let players else { return [] }
        var changes: [ControlWire.PlaybackEvent] = []
        for case .pause(let pause) in cues {
            let processIDs = lastPlayed.processIDs(playingOn: pause.sink, in: graph, movedOffSince: pause.movedOffSince)
            guard !processIDs.isEmpty else { continue }
            let paused = await players.pausePlaying(processIDs: processIDs)
            guard !paused.isEmpty else { continue }
            policy.record(paused, for: pause, at: decisionTime, config: config)
            changes.append(Self.change(.paused, pause.reason, paused, sink: pause.sink, accessory: pause.accessory, at: wallClock))
        }
        return changes
    }

    /// Resumes the players of each resume cue (the output is back on the accessory).
    nonisolated(nonsending) func resume(for cues: [PlaybackPolicy.Cue], wallClock: Int64) async -> [ControlWire.PlaybackEvent] {
        guard let players else { return [] }
        var changes: [ControlWire.PlaybackEvent] = []
        for case .resume(let resume) in cues {
            let resumed = await players.resume(resume.players)
            guard !resumed.isEmpty else { continue }
            changes.append(Self.change(.resumed, resume.reason, resumed, sink: resume.sink, accessory: resume.accessory, at: wallClock))
        }
        return changes
    }

    private static func change(
        _ action: ControlWire.PlaybackEvent.Action, _ reason: ControlWire.PlaybackEvent.Reason, _ players: [MediaPlayer], sink: String,
        accessory: AccessoryIdentity, at wallClock: Int64
    ) -> ControlWire.PlaybackEvent {
        ControlWire.PlaybackEvent(
            at: wallClock, action: action, reason: reason, players: players.map(\.busName).sorted(), sink: sink,
            accessory: accessory.description)
    }
}
