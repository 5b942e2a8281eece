import AudioGraph
import FoundationEssentials
import Logging
import RoutingPolicy
import Synchronization
import SystemBridge

/// The live engine. Every input — a burst of graph changes, a control request, the placement
/// timer, a config reload, BlueZ's adapters, an MPRIS status — goes through one path,
/// `handle(_:)`, one at a time: the policy decides, then the effects run in a fixed order
/// (publish, pause players, arm the timer, apply, resume players, save) and finish before the
/// next input is taken. Each part owns its own state:
///
/// - `session`: the current PipeWire connection, the apply mode, who waits for the first graph
/// - `engine`: the policy (a value: inputs in, decisions out); `configs`: where its config came
///   from, and who hears of each config it takes
/// - `decisions`: the last decision, the last route change, the history of defaults
/// - `applier`: cooperative and standalone application (echo filter, pins, port requests)
/// - `playback`: MPRIS pause/resume and where each stream last played
/// - `persister`: the state file and which restored registrations are stale
/// - `events`: subscribers, live recordings, and the host addresses subscribers were told about
/// - `inputs`: the queue every source submits to, and the placement timer
///
/// The parts that follow the graph observe each change themselves (`graphObservers`).
public actor Daemon {
    nonisolated let environment: DaemonEnvironment
    nonisolated let inputs = InputQueue()
    nonisolated let events: EventHub
    let applier: ApplyStage
    let playback = PlaybackHook()
    /// Notices a possible lost pick (events PipeWire dropped), for a reread before applying.
    let metadataResync: MetadataResync
    /// Players to resume that waited for a turn whose apply was skipped (a reread found a
    /// lost pick): resumed after the next apply, once the output moved.
    var deferredResumes: [PlaybackPolicy.Cue] = []
    let session: GraphSession
    var engine: PolicyEngine
    var configs: AppliedConfigs
    var decisions = DecisionLog()
    var persister: StatePersister
    /// Recordings asked for before the first graph: they begin with it.
    var recordingRequests: [RecordingRequest] = []

    /// Who is told of each graph change, in this order: the recording first (it reads the graph
    /// before anyone acts on the change), the session before the apply stage (which observes its
    /// mode).
    var graphObservers: [any GraphChangeObserver] { [events.recorder, GraphTrace(logger: logger), playback, session, applier, metadataResync] }

    /// Whether the first graph has come (the engine was rebased onto it).
    public var hasFirstGraph: Bool { session.firstGraphListeners.happened }

    /// The configs the daemon runs, in the order it takes them: the one in force now, then each
    /// one a reload brings (from the `.configLoaded` turn itself, so no later read of the actor
    /// can see another). A slow reader gets only the newest.
    public func appliedConfigs() -> AsyncStream<PolicyConfig> {
        configs.listen(current: engine.config)
    }

    func endConfigListeners() {
        configs.end()
    }

    /// Runs `handler` once the first graph has come (at once, on its own task, if it has).
    public func onFirstGraph(_ handler: @escaping @Sendable () async -> Void) {
        session.onFirstGraph(handler)
    }

    public init(options: DaemonOptions, logger: Logger, clock: any DaemonClock = SystemDaemonClock()) throws(ConfigErrors) {
        let file = try DaemonConfigFile.atStart(options: options)
        environment = DaemonEnvironment(options: options, logger: logger, clock: clock, configReadOnce: file.readOnce.map(ConfigReadOnce.init))
        configs = AppliedConfigs(source: file.source)
        session = GraphSession(logger: logger)
        engine = PolicyEngine(graph: Graph(), config: file.config)
        events = EventHub(hostAddresses: engine.knownHostAddresses)
        applier = ApplyStage(logger: logger)
        metadataResync = MetadataResync()
        persister = StatePersister(path: options.statePath, logger: logger)
    }

    var logger: Logger { environment.logger }
    public nonisolated var driverBoard: DriverBoard { environment.driverBoard }
    var now: Milliseconds { environment.clock.now }

    public var configDescription: String {
        guard let readOnce = environment.configReadOnce else { return configs.source.description }
        return "\(InputFile.name(configs.source.description)) (read once, from \(readOnce.origin): a reload keeps it)"
    }

    /// Restores the saved state, then takes inputs until `stop()`: PipeWire's (through a
    /// `GraphFeed` that reconnects while PipeWire is away) and every other source's.
    public func run() async {
        restoreState()
        let feed = GraphFeed(remote: environment.options.remote, logger: logger)
        let feeding = Task { [inputs] in await feed.run(into: inputs) }
        await takeInputs()
        feeding.cancel()
        await feeding.value
    }

    /// Takes inputs until `stop()` without connecting to PipeWire: a caller (a test) submits
    /// `.connected` and graph changes itself.
    func takeInputs() async {
        for await envelope in inputs.envelopes {
            if envelope.reply != nil { inputs.taken() }
            logger.trace("input: \(envelope.input.kind)")
            let result = inputs.isFinished ? InputResult.stopped : await handle(envelope.input)
            logger.trace("input done: \(envelope.input.kind)")
            envelope.reply?.resume(returning: result)
        }
        session.close()
    }

    /// Gives back every stream held silent (docs/policy.md §7: nothing stays muted behind the
    /// daemon), and saves that it did: before `stop()`, while PipeWire is still connected.
    public func releaseHeld() async {
        guard !playback.holds.isEmpty else { return }
        publish(await playback.releaseAll(in: engine.graph, reason: .stopped, muting: muting, wallClock: environment.clock.wallClock))
        playback.holdsChanged = false
        await persister.save(engine, history: decisions.history, held: playback.holds.all, mutedKeys: playback.holds.orphanKeys)
    }

    public func stop() {
        inputs.finish()
        session.close()
        events.close()
        // No first graph will come to begin them with.
        for request in recordingRequests { request.answer { nil } }
        recordingRequests = []
    }

    /// Waits for every queued save: at shutdown.
    public func flushState() async {
        await persister.flush()
    }

    /// Submits an input and waits until it has been handled.
    func submit(_ input: DaemonInput) async -> InputResult {
        await inputs.submit(input)
    }
}

/// What the daemon was started with and the clock it reads.
struct DaemonEnvironment: Sendable {
    let options: DaemonOptions
    let logger: Logger
    let clock: any DaemonClock
    /// What the built-in headset drivers are doing, for status (they write it, status reads).
    let driverBoard = DriverBoard()
    /// The explicit `--config` was read once at start (a pipe): reloads keep its config.
    let configReadOnce: ConfigReadOnce?
}
