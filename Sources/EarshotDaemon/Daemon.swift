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
/// - `session`: the current PipeWire connection and the apply mode
/// - `engine`: the policy (a value: inputs in, decisions out) and `configSource`, where its config came from
/// - `decisions`: the last decision, the last route change, the history of defaults
/// - `applier`: cooperative and standalone application (echo filter, pins, port requests)
/// - `playback`: MPRIS pause/resume and where each stream last played
/// - `persister`: the state file and which restored registrations are stale
/// - `events`: subscribers and the host addresses they were told about
/// - `inputs`: the queue every source submits to, and the placement timer
public actor Daemon {
    nonisolated let environment: DaemonEnvironment
    nonisolated let inputs = InputQueue()
    nonisolated let events: EventHub
    let applier: ApplyStage
    let playback = PlaybackHook()
    var engine: PolicyEngine
    var configSource: ConfigSource
    /// What an explicit `--config` read once at start was (a pipe, standard input): a reload
    /// keeps its config, and says so once (`configReadOnceNoticed`).
    nonisolated let configReadOnce: String?
    nonisolated let configReadOnceNoticed = Atomic<Bool>(false)
    var session = GraphSession()
    var decisions = DecisionLog()
    var persister: StatePersister
    /// Whether the first graph has come (the engine was rebased onto it), and who is told when
    /// it does (the rolling recording starts its first segment from that graph: nodes present
    /// at start are not arrivals, and a replay must not see them arrive).
    public private(set) var hasFirstGraph = false
    private var firstGraphHandlers: [@Sendable () async -> Void] = []
    /// Who hears of each config the daemon takes (the driver host, the rolling recording), in
    /// order: each has a stream of its own holding at most the newest config not yet read.
    private var configListeners: [AsyncStream<PolicyConfig>.Continuation] = []

    /// The configs the daemon runs, in the order it takes them: the one in force now, then each
    /// one a reload brings (from the `.configLoaded` turn itself, so no later read of the actor
    /// can see another). A slow reader gets only the newest.
    public func appliedConfigs() -> AsyncStream<PolicyConfig> {
        let (stream, continuation) = AsyncStream.makeStream(of: PolicyConfig.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(engine.config)
        if configListeners.count < 8 { configListeners.append(continuation) } else { continuation.finish() }
        return stream
    }

    func configApplied(_ config: PolicyConfig) {
        for listener in configListeners { listener.yield(config) }
    }

    func endConfigListeners() {
        for listener in configListeners { listener.finish() }
        configListeners = []
    }

    /// Runs `handler` once the first graph has come (at once, on its own task, if it has).
    public func onFirstGraph(_ handler: @escaping @Sendable () async -> Void) {
        if hasFirstGraph {
            Task { await handler() }
        } else if firstGraphHandlers.count < 8 {
            firstGraphHandlers.append(handler)
        }
    }

    func firstGraphCame() {
        hasFirstGraph = true
        let handlers = firstGraphHandlers
        firstGraphHandlers = []
        for handler in handlers { Task { await handler() } }
    }

    public init(options: DaemonOptions, logger: Logger, clock: any DaemonClock = SystemDaemonClock()) throws(ConfigErrors) {
        environment = DaemonEnvironment(options: options, logger: logger, clock: clock)
        let file = try DaemonConfigFile.atStart(options: options)
        configSource = file.source
        configReadOnce = file.readOnce
        engine = PolicyEngine(graph: Graph(), config: file.config)
        events = EventHub(hostAddresses: engine.knownHostAddresses)
        applier = ApplyStage(logger: logger)
        persister = StatePersister(path: options.statePath, logger: logger)
    }

    var logger: Logger { environment.logger }
    public nonisolated var driverBoard: DriverBoard { environment.driverBoard }
    var now: Milliseconds { environment.clock.now }

    public var configDescription: String {
        guard let readOnce = configReadOnce else { return configSource.description }
        return "\(InputFile.name(configSource.description)) (read once, from \(readOnce): a reload keeps it)"
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

    public func stop() {
        inputs.finish()
        session.close()
        events.close()
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
}
