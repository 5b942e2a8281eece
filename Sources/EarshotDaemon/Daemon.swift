import AudioGraph
import Foundation
import Logging
import SystemBridge
import RoutingPolicy

/// The live engine: mirrors the PipeWire graph into the policy, applies each decision
/// (cooperatively through WirePlumber or standalone), serves the control API, persists
/// registrations and reloads its config. An actor: every input is handled one at a time.
public actor Daemon {
    let options: DaemonOptions
    let logger: Logger
    let store: StateStore
    let writer: StateWriter
    var configSource: ConfigSource
    var engine: PolicyEngine
    var connection: PipeWireConnection?
    var mode: ApplyMode = .disconnected
    var sessionManager: String?
    var lastDecision: Decision?
    /// The latest decision that changed the default: `status` reports its reason.
    var lastRouteChange: Decision?
    var persisted = PersistedState()
    var staleAccessories: Set<AccessoryIdentity> = []
    var subscribers: [UInt64: AsyncStream<DaemonEvent>.Continuation] = [:]
    var nextSubscriber: UInt64 = 0
    var timerTask: Task<Void, Never>?
    var isStopped = false
    /// Set at the first PipeWire graph: inputs before it (a restored or early registration,
    /// BlueZ answering first) decide over an empty graph, and must not make the first real
    /// decision look like a later one.
    var hasSeenGraph = false
    /// The configured default Earshot wrote and has not yet seen echoed back.
    var pendingOwnWrite: String?
    /// Standalone: the links Earshot made, per stream, with the node each goes to.
    var ownedLinks: [ObjectID: [ObjectID: ObjectID]] = [:]
    var portsRequested: Set<ObjectID> = []
    /// Cooperative: pinned streams whose pin Earshot wrote into the `default` metadata.
    var pinsWritten: Set<ObjectID> = []
    var isReconciling = false
    var reconcileAgain = false
    /// MPRIS pause/resume: the players (nil without a session bus), what was paused, and
    /// where each stream last played.
    var mediaPlayers: (any MediaPlayerControl)?
    var playback = PlaybackPolicy()
    var lastPlayed = LastPlayedSinks()
    /// The host addresses subscribers were last told about (at start, the config's).
    var announcedHostAddresses: [HostAddress] = []
    let started = ContinuousClock.now

    public init(options: DaemonOptions, logger: Logger) throws(ConfigErrors) {
        self.options = options
        self.logger = logger
        store = StateStore(path: options.statePath)
        writer = StateWriter(store: store, logger: logger)
        configSource = ConfigSource.resolve(
            explicit: options.configPath, environment: options.environment, fileExists: FileManager.default.fileExists(atPath:))
        let config = try configSource.load()
        engine = PolicyEngine(graph: Graph(), config: config)
        announcedHostAddresses = engine.knownHostAddresses
    }

    /// Milliseconds since the daemon started: the policy's clock.
    var now: Milliseconds {
        let elapsed = started.duration(to: .now)
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    static var wallClock: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    public var configDescription: String { configSource.description }

    /// Restores the saved state, then keeps a connection to PipeWire until `stop()`:
    /// reconnects when the daemon goes away, with a short backoff while it is absent.
    public func run() async {
        restoreState()
        var backoff: Duration = .milliseconds(50)
        var reportedAbsence = false
        while !isStopped {
            let connection: PipeWireConnection
            do {
                connection = try await PipeWireConnection.connect(remote: options.remote, applicationName: "earshot")
            } catch {
                if !reportedAbsence { logger.warning("PipeWire not reachable (\(error)); retrying") }
                reportedAbsence = true
                try? await Task.sleep(for: backoff)  // retry backoff while PipeWire is down
                backoff = min(backoff * 2, .milliseconds(500))
                continue
            }
            backoff = .milliseconds(50)
            reportedAbsence = false
            await attach(connection)
            for await batch in connection.events {
                guard !isStopped else { break }
                await handle(batch)
            }
            detach(connection)
        }
    }

    public func stop() {
        isStopped = true
        timerTask?.cancel()
        connection?.close()
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers.removeAll()
    }

    // MARK: Connection lifecycle

    private func attach(_ connection: PipeWireConnection) async {
        self.connection = connection
        let graph = connection.snapshot()
        pendingOwnWrite = nil
        ownedLinks = [:]
        portsRequested = []
        pinsWritten = []
        detectMode(in: graph)
        lastPlayed.rebuild(from: graph)
        logger.info("connected to PipeWire (\(connection.remoteName)): \(mode.rawValue) mode\(sessionManager.map { ", session manager \($0)" } ?? "")")
        let firstTime = !hasSeenGraph
        hasSeenGraph = true
        let outcome = firstTime ? replaceAndStart(graph) : engine.handle(.graphReplaced(graph), at: now)
        if await process(outcome) { saveState() }
    }

    private func replaceAndStart(_ graph: Graph) -> PolicyOutcome {
        // The first graph: rebuild the engine over it, keeping registrations, config and the
        // host addresses learnt before PipeWire was reachable (BlueZ may answer first).
        engine = engine.rebased(onto: graph, at: now)
        return engine.handle(.start, at: now)
    }

    private func detach(_ connection: PipeWireConnection) {
        connection.close()
        if self.connection === connection { self.connection = nil }
        mode = .disconnected
        if !isStopped { logger.warning("PipeWire connection lost; reconnecting") }
    }

    func detectMode(in graph: Graph) {
        sessionManager = SessionManagerDetector.detect(in: graph)
        let newMode: ApplyMode = sessionManager == nil ? .standalone : .cooperative
        if newMode != mode, mode != .disconnected {
            logger.info("apply mode: \(newMode.rawValue)\(sessionManager.map { " (\($0))" } ?? "")")
        }
        mode = newMode
    }

    // MARK: Inputs

    /// A burst of graph events (all that arrived since the last turn): each goes through the
    /// engine and every route change is reported, but the result is applied once, for the
    /// graph after the burst. A switch's own link events come back in such bursts; applying
    /// after each of them re-ran the same checks and relink scan tens of times per switch.
    private func handle(_ batch: [PipeWireEvent]) async {
        var last: PolicyOutcome?
        var routeChanged = false
        var resumes: [[PlaybackPolicy.Cue]] = []
        for case .changed(let change) in batch {
            let outcome = take(change)
            let noted = note(outcome)
            if noted.routeChanged { routeChanged = true }
            if !noted.cues.isEmpty {
                // Paused at this decision: the rest of the burst (a sink's streams relinked
                // elsewhere) would hide which players were playing on the sink.
                await pausePlayers(for: noted.cues, at: outcome.decision.at)
                resumes.append(noted.cues)
            }
            last = outcome
        }
        guard let last else { return }
        schedule(last.nextDeadline)
        await apply()
        for cues in resumes { resumePlayers(for: cues) }
        // After applying: the switch never waits for the disk.
        if routeChanged { saveState() }
    }

    /// One graph change into the engine (and the mode, the user's picks, Earshot's links).
    private func take(_ change: GraphChange) -> PolicyOutcome {
        var outcome = engine.handle(.graphChanged(change), at: now)
        lastPlayed.record(change, in: engine.graph)
        switch change {
        case .client, .removed:
            let before = mode
            detectMode(in: engine.graph)
            if before != mode { pendingOwnWrite = nil }
        case .metadataProperty(let id, 0, Graph.configuredSinkKey?, _, let value?) where engine.graph.metadata[id]?.name == "default":
            if let name = MetadataEntry.name(inJSON: value) {
                if name == pendingOwnWrite {
                    pendingOwnWrite = nil
                } else if name != engine.currentDefault {
                    // Someone else (wpctl, pavucontrol, GNOME) chose: follow, don't fight. The
                    // graph-change decision before it is superseded, never applied.
                    outcome = engine.handle(.userSelectedDefault(name), at: now)
                }
            }
        default:
            break
        }
        // A link Earshot just made may have reused the id of an older object whose removal
        // is only now read from the queue: that removal is not about Earshot's link (forgetting
        // it would make the link look foreign, and its stream would never move again).
        if case .removed(let id) = change, connection?.ownsLiveObject(id) != true { forgetOwned(id) }
        return outcome
    }

    func timerFired() async {
        var routeChanged = false
        while let due = engine.nextDeadline, due <= now {
            if await process(engine.handle(.timerFired, at: now)) { routeChanged = true }
        }
        if routeChanged { saveState() }
    }

    /// Records a decision, tells subscribers and the log, and applies it. Returns whether the
    /// route changed: the caller saves the state then (after applying: a save fsyncs).
    @discardableResult
    func process(_ outcome: PolicyOutcome) async -> Bool {
        let noted = note(outcome)
        schedule(outcome.nextDeadline)
        await pausePlayers(for: noted.cues, at: outcome.decision.at)
        await apply()
        resumePlayers(for: noted.cues)
        return noted.routeChanged
    }

    /// Records a decision and tells subscribers and the log: whether the route changed, and
    /// what it means for the media players (paused before applying, resumed after).
    private func note(_ outcome: PolicyOutcome) -> (routeChanged: Bool, cues: [PlaybackPolicy.Cue]) {
        let decision = outcome.decision
        let previousDecision = lastDecision
        var routeChanged = false
        lastDecision = decision
        if decision.changed { lastRouteChange = decision }
        if decision.changed, let reason = decision.reason {
            let change = RouteChange(
                at: Self.wallClock, reason: reason, previous: decision.previous, current: decision.defaultSink,
                accessory: decision.trigger.accessory?.description, summary: decision.summary)
            logger.info("route \(reason.rawValue): \(decision.previous ?? "(none)") → \(decision.defaultSink ?? "(none)"); \(decision.summary)")
            if options.verbose { logger.info("\(DecisionText.render(decision, detail: .full))") }
            publish(.routeChanged(change))
            persisted.history.append(.init(at: change.at, current: change.current, previous: change.previous, reason: reason.rawValue))
            routeChanged = true
        } else if decision.trigger.isAccessory || decision.trigger == .configReplaced || decision.trigger == .hostAddressesChanged {
            logger.info("decision (\(decision.trigger)): \(decision.defaultSink ?? "(none)") stays; \(decision.summary)")
            if options.verbose { logger.info("\(DecisionText.render(decision, detail: .full))") }
        }
        return (routeChanged, playbackCues(for: decision, after: previousDecision))
    }

    private func schedule(_ deadline: Milliseconds?) {
        timerTask?.cancel()
        timerTask = nil
        guard let deadline else { return }
        let delay = max(0, deadline - now)
        timerTask = Task { [weak self] in
            do { try await Task.sleep(for: .milliseconds(delay)) } catch { return }  // until the placement deadline
            await self?.timerFired()
        }
    }

    func publish(_ event: DaemonEvent) {
        for subscriber in subscribers.values { subscriber.yield(event) }
    }

    func forgetOwned(_ id: ObjectID) {
        ownedLinks[id] = nil
        portsRequested.remove(id)
        pinsWritten.remove(id)
        for stream in ownedLinks.keys { ownedLinks[stream]?[id] = nil }
    }
}

extension DecisionTrigger {
    var accessory: AccessoryIdentity? {
        switch self {
        case .accessory(_, let identity), .timer(_, let identity): identity
        default: nil
        }
    }

    var isAccessory: Bool { accessory != nil }
}
