import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// The control API (socket and D-Bus) and the other sources' ways in. Requests that change
/// anything are inputs (queued, handled in order). Queries are not: they run on the actor
/// whenever it is free — between two inputs, or while a turn waits on an effect (a PipeWire
/// round trip of the apply, an MPRIS call) — so `status` can show a decision whose apply is
/// still under way (docs/architecture.md, "One input path").
extension Daemon: DaemonControl {
    /// Answers once the change is on disk too (a burst of changes shares one write: the daemon
    /// takes the next inputs meanwhile).
    public func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
        let (result, saved) = await performUnsaved(request)
        await saved?()
        return result
    }

    public func performUnsaved(_ request: AccessoryRequest) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?) {
        await performUnsaved(request, read: nil)
    }

    public func performUnsaved(_ request: AccessoryRequest, read: UInt64?) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?) {
        switch await submit(.accessory(request, read: read)) {
        case .accessory(let result):
            guard case .success = result else { return (result, nil) }
            return (result, persister.saved())
        case .done, .stopped: return (.failure(AccessoryError(.unknown, "the daemon is stopping; try again when it runs")), nil)
        }
    }

    public func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
        engine.current(identity)
    }

    public func list() async -> [ControlWire.ListedAccessory] {
        let graph = engine.graph
        return engine.accessories.entries.values.map(\.registration).sorted { $0.identity < $1.identity }.map { registration in
            let sinks = graph.sinks.filter { sink in
                switch registration.identity {
                case .address(let address): graph.bluetoothAddress(of: sink).flatMap(BluetoothAddress.init) == address
                case .nodeName(let name): sink.name == name
                }
            }.compactMap(\.name)
            var driver: ControlWire.DriverEntry?
            if case .address(let address) = registration.identity { driver = environment.driverBoard.entry(for: address)?.published }
            return ControlWire.ListedAccessory(
                registration, stale: persister.staleAccessories.contains(registration.identity), sinks: sinks, driver: driver)
        }
    }

    public func status() async -> ControlWire.Status {
        ControlWire.Status(
            mode: session.mode, remote: session.connection?.remoteName ?? environment.options.remote ?? "pipewire-0",
            connected: session.connection != nil, sessionManager: session.sessionManager?.name,
            sessionManagerVersion: session.sessionManager?.version, decision: decisions.forStatus.map { .record(DecisionRecord($0)) },
            subscribers: events.subscriberCount, hostAddresses: engine.knownHostAddresses.map(ControlWire.HostAddressEntry.init),
            state: ControlWire.Status.state(problem: persister.problem), drivers: environment.driverBoard.snapshot.map(\.published),
            diagnostics: ControlWire.Diagnostics(switchSpans: applier.writer.spans.spans), calls: decisions.callsForStatus,
            playback: playback.status)
    }

    /// The decision `status` reports, typed (its record is what `status` publishes).
    public var latestDecision: Decision? { decisions.forStatus }

    public nonisolated func driver(of identity: AccessoryIdentity) async -> ControlWire.DriverEntry? {
        guard case .address(let address) = identity else { return nil }
        return environment.driverBoard.entry(for: address)?.published
    }

    /// A recording from now on; asked for before the first graph, from that graph, as the
    /// daemon takes it (waits for it: `requestRecording`).
    public func startRecording() async -> InputRecording? {
        await requestRecording().recording()
    }

    /// Asks for a recording: answered at once once the daemon has its first graph, else as it
    /// takes that graph (a recording from the empty graph before it would replay the nodes
    /// present at start as arrivals). Refused (answered nil) when the daemon stopped, or when
    /// as many recordings as may run wait already.
    func requestRecording() -> RecordingRequest {
        let request = RecordingRequest()
        if hasFirstGraph || inputs.isFinished {
            request.answer { inputs.isFinished ? nil : beginRecording() }
            return request
        }
        recordingRequests.removeAll { $0.isAbandoned }
        guard recordingRequests.count < InputRecorder.maximumRecordings else {
            request.answer { nil }
            return request
        }
        recordingRequests.append(request)
        logger.info("a recording was asked for before PipeWire's first graph: it begins with that graph")
        return request
    }

    /// Begins the recordings asked for before the first graph: at the first graph, once the
    /// engine decided over it (before any later input is recorded).
    func beginRequestedRecordings() {
        for request in recordingRequests { request.answer { beginRecording() } }
        recordingRequests = []
    }

    /// A recording from now: the live registrations at 0, then each input as it comes. Its
    /// graph names the defaults the daemon decided (`PolicyEngine.graphNamingDecisions`), so
    /// a replay starts where the daemon stands even while the graph does not name them yet
    /// (the decision not yet written, or its echo not yet back).
    private func beginRecording() -> InputRecording? {
        let registrations = engine.accessories.entries.values.map(\.registration).sorted { $0.identity < $1.identity }.map { registration in
            let (verb, body) = AccessoryRequestEncoder.encode(.register(registration.identity, reporter: registration.reporter, registration.configuration))
            return JSONValue.object(["at": .integer(0), verb: body])
        }
        guard let lines = events.recorder.begin(at: now, prefix: registrations) else { return nil }
        return InputRecording(graph: PwDumpEncoder.encode(engine.graphNamingDecisions), lines: lines)
    }

    /// `[record] keep-hours` of the config in force.
    public var recordKeepHours: Int { engine.config.recordKeepHours }

    /// `[drivers]` of the config in force.
    public var driversConfig: DriversConfig { engine.config.drivers }

    public func reporter(of identity: AccessoryIdentity) async -> String? {
        engine.accessories[identity]?.registration.reporter
    }

    public func warnings(after request: AccessoryRequest) async -> [String] {
        guard case .register(.nodeName(let name), _, _) = request, !engine.graph.sinks.contains(where: { $0.name == name }) else { return [] }
        return ["no sink is named \"\(name)\" now: the registration applies once one appears (`wpctl status` or `pw-dump` show the node.names; a Bluetooth headset can be named by its address instead)"]
    }

    public nonisolated func subscribe() async -> AsyncStream<ControlWire.Event> {
        events.subscribe()
    }

    public nonisolated func subscribeLines() async -> AsyncStream<[UInt8]> {
        events.subscribeLines()
    }

    public nonisolated func subscribeForSignals() async -> AsyncStream<ControlWire.Event> {
        events.subscribe(bounded: false)
    }
}

/// The other sources: the config watcher, BlueZ, MPRIS.
extension Daemon {
    /// Config reload (SIGHUP or the file changing). The file is read and parsed here, off the
    /// actor (the running config keeps serving meanwhile), and only ever a regular file of at
    /// most 16 MiB, opened non-blocking (`DaemonConfigFile`): a FIFO or a device put at the
    /// path never blocks this. A valid one is submitted as an input; one that cannot be read
    /// or is invalid is logged with file:line:col and the last good config stays. A config read
    /// once from a pipe or standard input is kept, and that is said once.
    public nonisolated func reloadConfig(because cause: String) async {
        if let readOnce = environment.configReadOnce {
            let path = InputFile.name(environment.options.configPath ?? "-")
            if !readOnce.noticed.exchange(true, ordering: .relaxed) {
                environment.logger.warning(
                    "config not reloaded (\(cause)): \(path) was read once at start, from \(readOnce.origin), and cannot be read again; keeping the config read then (restart the daemon to change it; later reloads say nothing more)")
            } else {
                environment.logger.debug("config not reloaded (\(cause)): \(path) was read once at start")
            }
            return
        }
        do {
            let (source, config) = try DaemonConfigFile.reload(options: environment.options)
            _ = await submit(.configLoaded(config, source, cause: cause))
        } catch {
            for problem in error.errors { environment.logger.error("config not reloaded (\(cause)): \(problem)") }
            let running = await configs.source
            environment.logger.error("keeping the last good config from \(running)")
        }
    }

    /// The files whose changes trigger a reload: the explicit config, or every search path;
    /// none for a config read once from a pipe.
    public nonisolated var watchedConfigPaths: [String] {
        guard environment.configReadOnce == nil else { return [] }
        return ConfigSource.candidates(explicit: environment.options.configPath, environment: environment.options.environment)
    }

    /// This host's Bluetooth adapters as BlueZ lists them now (empty when BlueZ is absent):
    /// they join the config's `host-addresses` for the source-identifier rule (docs/policy.md §1).
    public nonisolated func adapterAddressesChanged(_ adapters: [HostAddress]) async {
        _ = await submit(.hostAddressesChanged(adapters))
    }

    /// Turns pause/resume on; without it (no session bus) nothing is tracked or paused.
    public func attachMediaPlayers(_ control: any MediaPlayerControl) {
        playback.players = control
    }

    /// A player's PlaybackStatus changed on the bus (from `MPRISPlayers`).
    public nonisolated func playerStatusChanged(connection: String, to status: String, signal: UInt64 = .max) async {
        _ = await submit(.playerStatusChanged(connection: connection, status: status, signal: signal))
    }
}
