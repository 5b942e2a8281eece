import RoutingPolicy

/// MPRIS pause/resume around each decision (design.md: a player pauses when headphones go
/// away): `PlaybackPolicy` decides, `mediaPlayers` acts, `.playbackChanged` tells `watch`.
extension Daemon {
    /// Turns pause/resume on; without it (no session bus) nothing is tracked or paused.
    public func attachMediaPlayers(_ control: any MediaPlayerControl) {
        mediaPlayers = control
    }

    /// A player's PlaybackStatus changed on the bus (from `MPRISPlayers`).
    public func playerStatusChanged(connection: String, to status: String) {
        logger.debug("MPRIS player \(connection): \(status)")
        playback.playerStatusChanged(connection: connection, to: status)
    }

    func playbackCues(for decision: Decision, after previous: Decision?) -> [PlaybackPolicy.Cue] {
        guard mediaPlayers != nil else { return [] }
        return playback.react(to: decision, after: previous, config: engine.config.playback)
    }

    /// Pauses before the decision is applied, so the players stop before their audio would
    /// reach the new default (the speakers). Which processes play on the sink is read now,
    /// before anything relinks their streams.
    func pausePlayers(for cues: [PlaybackPolicy.Cue], at decisionTime: Milliseconds) async {
        guard let mediaPlayers else { return }
        for case .pause(let pause) in cues {
            let processIDs = lastPlayed.processIDs(playingOn: pause.sink, in: engine.graph)
            guard !processIDs.isEmpty else { continue }
            let players = await mediaPlayers.pausePlaying(processIDs: processIDs)
            guard !players.isEmpty else { continue }
            playback.record(players, for: pause, at: decisionTime, config: engine.config.playback)
            announce(.paused, pause.reason, players, sink: pause.sink, accessory: pause.accessory)
        }
    }

    /// Resumes after the decision is applied (the output is back on the accessory), without
    /// holding up the next input.
    func resumePlayers(for cues: [PlaybackPolicy.Cue]) {
        guard let mediaPlayers else { return }
        for case .resume(let resume) in cues {
            Task {
                let resumed = await mediaPlayers.resume(resume.players)
                guard !resumed.isEmpty else { return }
                announce(.resumed, .accessoryReturned, resumed, sink: resume.sink, accessory: resume.accessory)
            }
        }
    }

    private func announce(
        _ action: PlaybackChange.Action, _ reason: PlaybackChange.Reason, _ players: [MediaPlayer], sink: String, accessory: AccessoryIdentity
    ) {
        let names = players.map(\.busName).sorted()
        logger.info("playback \(action.rawValue) (\(reason.rawValue)): \(names.joined(separator: ", ")) on \(sink)")
        publish(.playbackChanged(PlaybackChange(
            at: Self.wallClock, action: action, reason: reason, players: names, sink: sink, accessory: accessory.description)))
    }
}
