import WireFields
import ControlProtocol
import AudioGraph
import RoutingPolicy
import SystemBridge

/// The one input path: decide, then run the effects in order. `Turn` collects what the
/// decisions of one input mean for the effects that run once at its end.
extension Daemon {
    struct Turn {
        /// The route changed: the state (its history) is saved.
        var routeChanged = false
        /// The registrations changed: the state is saved (a client's reply waits for the write).
        var registrationsChanged = false
        /// Players to resume once the output is back.
        var resumes: [PlaybackPolicy.Cue] = []
    }

    func handle(_ input: DaemonInput) async -> InputResult {
        var turn = Turn()
        var result = InputResult.done
        switch input {
        case .connected(let connection, let graph):
            events.recorder.recordReplacement(of: engine.graph, by: graph, at: now)
            await connected(connection, graph: graph, turn: &turn)
        case .graphChanged(let changes):
            let observers = graphObservers
            for change in changes { await consider(take(change, observers: observers), turn: &turn) }
        case .disconnected(let connection):
            if session.detach(connection) { logger.warning("PipeWire connection lost; reconnecting") }
            return .done
        case .accessory(let request, let read):
            let answer = decide(request)
            if case .success = answer.result {
                turn.registrationsChanged = true
                events.recorder.recordAccepted(request, at: now)
            }
            result = .accessory(answer.result)
            guard let outcome = answer.outcome else { return result }
            // The write this turn makes, if any, is timed from the request's read (SwitchSpan).
            applier.writer.spans.requestRead = read
            await consider(outcome, turn: &turn)
        case .timerFired:
            while let due = engine.nextDeadline, due <= now { await consider(engine.handle(.timerFired, at: now), turn: &turn) }
        case .configLoaded(let config, let source, let cause):
            guard config != engine.config || source != configs.source else { return .done }
            configs.source = source
            logger.info("config reloaded from \(source) (\(cause))")
            let endsBefore = engine.accessories.endCount
            let outcome = engine.handle(.configReplaced(config), at: now)
            announceInvalidated(engine.accessories.ended(since: endsBefore))
            events.announceHostAddresses(engine.knownHostAddresses, at: environment.clock.wallClock)
            turn.registrationsChanged = true  // a reload may end registrations
            configs.applied(engine.config)
            await consider(outcome, turn: &turn)
        case .hostAddressesChanged(let adapters):
            let listed = adapters.isEmpty ? "none" : adapters.map(\.description).joined(separator: ", ")
            logger.info("BlueZ adapters: \(listed)")
            let outcome = engine.handle(.hostAddressesChanged(adapters), at: now)
            events.announceHostAddresses(engine.knownHostAddresses, at: environment.clock.wallClock)
            // Nothing decided yet: the engine is rebuilt over the first graph and takes the
            // learnt addresses along; deciding now would pre-empt the initial decision.
            guard decisions.last != nil else { return .done }
            await consider(outcome, turn: &turn)
        case .playerStatusChanged(let connection, let status, let signal):
            logger.debug("MPRIS player \(connection): \(status)")
            playback.playerStatusChanged(connection: connection, to: status, signal: signal)
            // A player that plays again has its drained streams back at once.
            publish(await playback.releaseDue(in: engine.graph, muting: muting, wallClock: environment.clock.wallClock, logger: logger))
            return .done
        }
        await finish(turn)
        applier.writer.spans.requestRead = nil
        return result
    }

    // MARK: Deciding

    private func connected(_ connection: any PipeWireCommands, graph: Graph, turn: inout Turn) async {
        let firstTime = session.attach(connection, graph: graph)
        applier.reset(mode: session.mode)
        playback.rebuild(from: graph)
        logger.info("connected to PipeWire (\(connection.remoteName)): \(session.mode.rawValue) mode\(session.sessionManager.map { ", session manager \($0)" } ?? "")")
        let outcome: PolicyOutcome
        if firstTime {
            // The first graph: rebuild the engine over it, keeping registrations, config and
            // the host addresses learnt before PipeWire was reachable (BlueZ may answer first).
            // A start never moves audio, unless a reporter already reported a transition.
            let plainRestart = engine.placementTransitions == persister.transitionsAfterRestore && !placementReportedSinceRestore
            engine = engine.rebased(onto: graph, at: now)
            if plainRestart { engine.holdCurrentDefault() }
            for (direction, choice) in persister.restoredChoices {
                engine.restoreChoices(of: direction, lastChoice: choice.lastChoice, override: choice.override, hold: plainRestart)
            }
            outcome = engine.handle(.start, at: now)
            session.firstGraphTaken()
            if !persister.restoredHeld.isEmpty || !persister.restoredMutedKeys.isEmpty {
                // A daemon before this one ended holding these: whatever nobody touched since is
                // given back now (docs/policy.md §7: nothing stays muted behind a crash), and a
                // later stream the session manager starts muted under their keys too.
                playback.restore(persister.restoredHeld, orphanKeys: persister.restoredMutedKeys)
                persister.restoredHeld = []
                persister.restoredMutedKeys = []
                publish(await playback.releaseAll(in: graph, reason: .restarted, muting: muting, wallClock: environment.clock.wallClock))
            }
            beginRequestedRecordings()
        } else {
            outcome = engine.handle(.graphReplaced(graph), at: now)
        }
        await consider(outcome, turn: &turn)
    }

    /// One graph change into the engine, and to each part that observes its kind: before the
    /// engine takes it and after. A part may find it is a user's pick (a configured default
    /// Earshot did not write): the engine then takes the pick, whose decision supersedes the
    /// change's own (never applied).
    private func take(_ change: GraphChange, observers: [any GraphChangeObserver]) -> PolicyOutcome {
        let observing = observers.filter { $0.observedKinds.contains(change.kind) }
        let before = GraphTurn(graph: engine.graph, session: session, currentDefault: engine.currentDefault, currentSource: engine.currentSource, now: now)
        for observer in observing { observer.graphWillChange(change, in: before) }
        var outcome = engine.handle(.graphChanged(change), at: now)
        for observer in observing {
            let after = GraphTurn(graph: engine.graph, session: session, currentDefault: engine.currentDefault, currentSource: engine.currentSource, now: now)
            if let pick = observer.graphDidChange(change, in: after) {
                outcome = engine.handle(pick, at: now)
                events.recorder.recordPick(pick, at: now)
            }
        }
        return outcome
    }

    /// A control request into the engine: its outcome, and the answer for the client.
    private func decide(_ request: AccessoryRequest) -> (outcome: PolicyOutcome?, result: Result<AccessoryConfiguration?, AccessoryError>) {
        let outcome = engine.handle(.accessory(request), at: now)
        if let error = outcome.decision.error {
            decisions.recordRefusal(outcome.decision)
            return (nil, .failure(error))
        }
        let identity = request.identity
        persister.confirm(identity)
        let registration = engine.accessories[identity]?.registration
        let kind: ControlWire.AccessoryEvent.Change
        switch request {
        case .register: kind = .registered
        case .update: kind = .updated
        case .unregister: kind = .unregistered
        }
        events.publish(.accessory(ControlWire.AccessoryEvent(
            at: environment.clock.wallClock, change: kind, accessory: identity.description, reporter: registration?.reporter,
            configuration: registration.map { ControlWire.Configuration($0.configuration) })))
        return (outcome, .success(registration?.configuration))
    }

    /// Registrations the engine ended on its own (a config reload): logged, and told to
    /// subscribers as `invalidated`, before the decision they cause.
    private func announceInvalidated(_ ended: [EndedRegistration]) {
        for registration in ended {
            logger.notice("registration of \(registration.identity) by \(registration.reporter) invalidated: \(registration.why)")
            events.publish(.accessory(ControlWire.AccessoryEvent(
                at: environment.clock.wallClock, change: .invalidated, accessory: registration.identity.description,
                reporter: registration.reporter, configuration: nil)))
        }
    }

    // MARK: Effects, in order

    /// Records a decision, publishes it and pauses the players it takes the output from, at
    /// once: later changes of the same burst (their streams relinked) would hide where they played.
    private func consider(_ outcome: PolicyOutcome, turn: inout Turn) async {
        // A port, a link, a client: nothing the policy ranks changed, nothing to record.
        guard let decision = outcome.decided else { return }
        let previous = decisions.last
        let wallClock = environment.clock.wallClock
        let changes = decisions.record(decision, wallClock: wallClock)
        DecisionLog.log(decision, changes: changes, verbose: environment.options.verbose, to: logger)
        for node in decision.flapping {
            // Said once per flapping spell (§1 settling); the node is held back meanwhile.
            logger.warning("\(node.sentence)")
        }
        for change in changes {
            events.publish(.routeChange(change))
            turn.routeChanged = true
        }
        let callEvents = decisions.callEvents(of: decision, wallClock: wallClock)
        DecisionLog.log(callEvents: callEvents, to: logger)
        for event in callEvents { events.publish(event) }
        let cues = playback.cues(for: decision, after: previous, config: engine.config.playback)
        guard !cues.isEmpty else { return }
        publish(await playback.pause(for: cues, at: decision.at, graph: engine.graph, config: engine.config, muting: muting, wallClock: wallClock))
        turn.resumes += cues
    }

    /// Reads afresh the `default` metadata whose effective default left a configured sink (or
    /// source) that is still there, with no write of Earshot's own in flight (cooperative:
    /// `MetadataResync`). True when it found changes PipeWire had not passed on: they come as
    /// the next input, which decides again with them, so nothing is applied now (applying
    /// would write the old decision over a pick the daemon never heard of).
    private func metadataReadAfresh() async -> Bool {
        let suspects = metadataResync.takeSuspects().filter { suspect in
            (suspect.direction == .output ? applier.writer : applier.sourceWriter).inFlight.isEmpty
        }
        guard !suspects.isEmpty, session.mode == .cooperative, let connection = session.connection else { return false }
        var missed = 0
        for id in Set(suspects.map(\.metadata)).sorted() {
            do { missed += try await connection.rereadMetadata(id: id) } catch { logger.debug("default metadata \(id) not read afresh: \(error)") }
        }
        guard missed > 0 else { return false }
        logger.info("default metadata: \(missed) change(s) PipeWire did not pass on, read afresh before applying (a client's bind of it was pending)")
        return true
    }

    /// When the apply stage wants to look again with no other input (a hand-back's grace).
    var applyDeadline: Milliseconds? { applier.nextDeadline }

    /// Once per input: arm the timer for the engine's next deadline, apply, resume players,
    /// save. Applying comes before saving: the switch never waits for the disk. The timer is
    /// armed again after applying when the apply stage wants to look again sooner (a stream
    /// handed back to the session manager and not yet linked by it).
    private func finish(_ turn: Turn) async {
        inputs.scheduleTimer(at: engine.nextDeadline, clock: environment.clock)
        var resumes = turn.resumes
        if await metadataReadAfresh() {
            // Nothing applied: players resume after the output moved, on the next turn's apply.
            deferredResumes += resumes
            resumes = []
        } else {
            resumes = deferredResumes + resumes
            deferredResumes = []
            await applier.apply(
                engine.currentDefault, mode: session.mode, sessionManager: session.sessionManager, graph: engine.graph, on: session.connection,
                holdsFoundDefault: engine.holdsFoundDefault,
                source: engine.followsInput ? (engine.currentSource, engine.holdsFoundSource) : nil, calls: engine.streamTargets, at: now)
            if let again = applier.nextDeadline, again < engine.nextDeadline ?? .max {
                inputs.scheduleTimer(at: again, clock: environment.clock)
            }
        }
        publish(await playback.resume(for: resumes, wallClock: environment.clock.wallClock))
        publish(await playback.releaseDue(in: engine.graph, muting: muting, wallClock: environment.clock.wallClock, logger: logger))
        if turn.routeChanged || turn.registrationsChanged || playback.holdsChanged {
            playback.holdsChanged = false
            await persister.save(engine, history: decisions.history, held: playback.holds.all, mutedKeys: playback.holds.orphanKeys)
        }
    }

    /// Mutes and unmutes streams through the connection, while there is one.
    var muting: (any StreamMuting)? { session.connection.map { ConnectionMuting(connection: $0) } }

    /// Publishes and logs what was done to players and streams.
    func publish(_ changes: [ControlWire.PlaybackEvent]) {
        for change in changes {
            logger.info("\(DecisionLog.line(change))")
            events.publish(.playback(change))
        }
    }

    // MARK: State

    /// A reporter said the headset went on or off — worn against not worn (no placement is not
    /// worn), as a transition counts it — relative to the restored registration before the first
    /// graph (a new registration counts when it says worn): the start is then no plain restart,
    /// and the first decision follows it. An off-head still within its off-grace has not taken
    /// effect, so it is no transition yet, but the engine is rebuilt over the first graph and its
    /// grace with it; held, the old default would stay for good. `in-ear` after a restored
    /// `on-head` is no change: the found default holds.
    var placementReportedSinceRestore: Bool {
        engine.accessories.entries.values.contains { entry in
            let worn = entry.registration.configuration.placement?.isWorn ?? false
            guard let restored = persister.placementsAfterRestore[entry.registration.identity] else { return worn }
            return worn != (restored?.isWorn ?? false)
        }
    }

    /// Reads the state file's registrations, history and choices, once: the runner calls it
    /// before the control socket and D-Bus open, so the first client already sees what was
    /// restored (issue 28: a client right after a restart found no registrations); `run` calls
    /// it too, for a daemon started without the runner.
    public func restoreState() {
        guard !persister.restored else { return }
        persister.restored = true
        let saved = persister.load()
        decisions = DecisionLog(history: saved.history)
        persister.restoredChoices = saved.choices
        persister.restoredHeld = saved.held
        persister.restoredMutedKeys = saved.mutedKeys
        for registration in saved.registrations {
            let request = AccessoryRequest.register(registration.identity, reporter: registration.reporter, registration.configuration)
            if let error = engine.handle(.accessory(request), at: now).decision.error {
                logger.warning("saved registration of \(registration.identity) not restored: \(error.message)")
            } else {
                persister.markStale(registration.identity)
            }
        }
        persister.transitionsAfterRestore = engine.placementTransitions
        persister.placementsAfterRestore = Dictionary(
            engine.accessories.entries.values.map { ($0.registration.identity, $0.registration.configuration.placement) }, uniquingKeysWith: { a, _ in a })
        if !saved.registrations.isEmpty {
            logger.info("restored \(saved.registrations.count) registration(s) from \(persister.store.path) (stale until their reporters confirm)")
        }
    }
}
