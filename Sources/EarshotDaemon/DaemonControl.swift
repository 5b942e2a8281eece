import ControlProtocol
import AudioGraph
import RoutingPolicy

/// What the control API (the socket, and D-Bus) asks of the running daemon. The transport
/// parses and frames; this is the semantics. Implemented by `Daemon`.
public protocol DaemonControl: Sendable {
    /// register / update / unregister. Returns the accessory's configuration afterwards
    /// (nil after unregister), or the refusal.
    func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError>
    /// current: the configuration of one registration.
    func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError>
    /// list: every live registration.
    func list() async -> [AccessoryStatus]
    /// status: mode, connection and the current decision with its explanation.
    func status() async -> DaemonStatus
    /// subscribe: route changes, accessory, playback and host-address events from now on,
    /// until the stream is dropped.
    func subscribe() async -> AsyncStream<DaemonEvent>
    /// The same events for the daemon's own D-Bus signalling: never cut off.
    func subscribeForSignals() async -> AsyncStream<DaemonEvent>
    /// The same events for the control socket, each as its wire line.
    func subscribeLines() async -> AsyncStream<[UInt8]>
    /// What a successful request's reply warns about (a register naming a node.name no sink
    /// has now): the request stands, but may not do what its sender meant.
    func warnings(after request: AccessoryRequest) async -> [String]
    /// The reporter that registered `identity` (nil when none): `current` replies name it.
    func reporter(of identity: AccessoryIdentity) async -> String?
    /// The built-in driver driving `identity`'s device, if one does: `current` replies show it.
    func driver(of identity: AccessoryIdentity) async -> DriverBoard.Entry?
    /// A recording of the inputs from now (`earshot record`); nil when too many run already.
    func startRecording() async -> InputRecording?
    /// `perform` without waiting for the disk (see the extension).
    func performUnsaved(_ request: AccessoryRequest) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?)
    /// `performUnsaved`, with when the socket read the request's line (`MonotonicClock`
    /// nanoseconds): the daemon times its own span of the switch it causes (`SwitchSpan`).
    func performUnsaved(_ request: AccessoryRequest, read: UInt64?) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?)
}

extension DaemonControl {
    /// `perform`, answering before the change is on disk: `saved` returns once it is. A
    /// transport that pipelines takes the next request meanwhile, so a burst shares writes.
    public func performUnsaved(_ request: AccessoryRequest) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?) {
        (await perform(request), nil)
    }

    public func performUnsaved(_ request: AccessoryRequest, read: UInt64?) async -> (Result<AccessoryConfiguration?, AccessoryError>, (@Sendable () async -> Void)?) {
        await performUnsaved(request)
    }

    public func warnings(after request: AccessoryRequest) async -> [String] { [] }
    public func reporter(of identity: AccessoryIdentity) async -> String? { nil }
    public func driver(of identity: AccessoryIdentity) async -> DriverBoard.Entry? { nil }
    public func startRecording() async -> InputRecording? { nil }
    public func subscribeForSignals() async -> AsyncStream<DaemonEvent> { await subscribe() }

    public func subscribeLines() async -> AsyncStream<[UInt8]> {
        let events = await subscribe()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events { continuation.yield(Array(ControlWire.line(ControlWire.event(event)))) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// One registration as `list` and `accessory show` report it.
public struct AccessoryStatus: Sendable, Hashable {
    public var registration: AccessoryRegistration
    /// Restored from disk and not yet confirmed by its reporter since the daemon started.
    public var isStale: Bool
    /// The sinks this accessory matches now (node.name).
    public var sinks: [String]
    /// The built-in driver that drives it, if one does (docs/drivers.md).
    public var driver: DriverBoard.Entry?

    public init(registration: AccessoryRegistration, isStale: Bool, sinks: [String]) {
        self.registration = registration
        self.isStale = isStale
        self.sinks = sinks
    }
}

/// How decisions are applied (docs/architecture.md, "Applying a decision").
public enum ApplyMode: String, Sendable, Hashable, Codable {
    /// A session manager (WirePlumber) runs: write the configured default, let it move streams.
    case cooperative
    /// No session manager: keep the `default` metadata and link streams ourselves.
    case standalone
    /// Not connected to PipeWire.
    case disconnected
}

public struct DaemonStatus: Sendable {
    public var mode: ApplyMode
    /// The PipeWire remote, and whether it is connected.
    public var remote: String
    public var connected: Bool
    /// The name of the detected session manager, if any.
    public var sessionManager: String?
    /// Its version as its client publishes it (WirePlumber 0.5 and later; nil for 0.4).
    public var sessionManagerVersion: String?
    /// The latest decision (nil before the first).
    public var decision: Decision?
    /// How many clients are subscribed to events now.
    public var subscribers: Int
    /// This host's Bluetooth addresses in use, with where each came from (config, BlueZ).
    public var hostAddresses: [HostAddress]
    /// Why registrations and history are not being saved (the state file), if they are not.
    public var stateProblem: String?
    /// The built-in headset drivers' devices (docs/drivers.md).
    public var drivers: [DriverBoard.Entry] = []
    /// Earshot's own span of the last switches control requests caused, oldest first (a
    /// diagnostic for the bench: docs/performance.md).
    public var switchSpans: [SwitchSpan]

    public init(
        mode: ApplyMode, remote: String, connected: Bool, sessionManager: String?, sessionManagerVersion: String? = nil, decision: Decision?, subscribers: Int = 0,
        hostAddresses: [HostAddress] = [], stateProblem: String? = nil, switchSpans: [SwitchSpan] = []
    ) {
        self.switchSpans = switchSpans
        self.stateProblem = stateProblem
        self.subscribers = subscribers
        self.hostAddresses = hostAddresses
        self.mode = mode
        self.remote = remote
        self.connected = connected
        self.sessionManager = sessionManager
        self.sessionManagerVersion = sessionManagerVersion
        self.decision = decision
    }
}

/// What `subscribe` streams (and `earshot watch` prints).
public enum DaemonEvent: Sendable, Hashable {
    case routeChanged(RouteChange)
    case accessoryChanged(AccessoryChange)
    /// Earshot paused or resumed MPRIS players (headphones came off / went back on).
    case playbackChanged(PlaybackChange)
    /// This host's Bluetooth addresses in use changed (BlueZ's adapters, a config reload).
    case hostAddressesChanged(HostAddressesChange)
}

public struct PlaybackChange: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, Codable { case paused, resumed }
    /// Why: the worn accessory came off (after its grace), its sink disappeared, or it went
    /// back on within the resume window.
    public enum Reason: String, Sendable, Hashable, Codable {
        case accessoryRemoved = "accessory-removed"
        case sinkRemoved = "sink-removed"
        case accessoryReturned = "accessory-returned"
        /// The default sink's port was unplugged (headphones pulled from the jack).
        case portUnplugged = "port-unplugged"
        /// That port was plugged back within the resume window.
        case portPlugged = "port-plugged"
    }

    /// Wall-clock time, milliseconds since the Unix epoch.
    public var at: Int64
    public var action: Action
    public var reason: Reason
    /// The MPRIS bus names acted on (`org.mpris.MediaPlayer2.mpv.instance1234`), sorted.
    public var players: [String]
    /// The sink (node.name) they were playing on.
    public var sink: String?
    /// The accessory whose change caused it (its address or node.name).
    public var accessory: String?

    public init(at: Int64, action: Action, reason: Reason, players: [String], sink: String?, accessory: String?) {
        self.at = at
        self.action = action
        self.reason = reason
        self.players = players
        self.sink = sink
        self.accessory = accessory
    }
}

public struct RouteChange: Sendable, Hashable {
    /// Wall-clock time, milliseconds since the Unix epoch.
    public var at: Int64
    public var reason: RouteChangeReason
    public var previous: String?
    public var current: String?
    /// The accessory whose change caused it, if one did (its address or node.name).
    public var accessory: String?
    /// The decision's one-line summary ("2/5 sinks eligible: …").
    public var summary: String
    /// The port the default plays to before and after (its active route's description), when
    /// the sink's device says.
    public var previousPort: String?
    public var port: String?
    /// The jack or port event that made the change, if one did: `unplugged` or `plugged`, and
    /// which port of which sink.
    public var portEvent: PortEvent?
    /// Which default changed: the output (the default sink) or the input (the default source,
    /// docs/policy.md §8; `previous`, `current` and the ports then name sources).
    public var direction: AudioDirection

    public init(
        at: Int64, reason: RouteChangeReason, previous: String?, current: String?, accessory: String?, summary: String,
        previousPort: String? = nil, port: String? = nil, portEvent: PortEvent? = nil, direction: AudioDirection = .output
    ) {
        self.direction = direction
        self.at = at
        self.reason = reason
        self.previous = previous
        self.current = current
        self.accessory = accessory
        self.summary = summary
        self.previousPort = previousPort
        self.port = port
        self.portEvent = portEvent
    }
}

public struct AccessoryChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable { case registered, updated, unregistered, invalidated }
    public var at: Int64
    public var kind: Kind
    public var accessory: String
    public var reporter: String?
    /// The configuration after the change (nil once unregistered or invalidated).
    public var configuration: AccessoryConfiguration?

    public init(at: Int64, kind: Kind, accessory: String, reporter: String?, configuration: AccessoryConfiguration?) {
        self.at = at
        self.kind = kind
        self.accessory = accessory
        self.reporter = reporter
        self.configuration = configuration
    }
}

extension DaemonStatus {
    /// This status with the drivers' devices.
    func with(drivers: [DriverBoard.Entry]) -> DaemonStatus {
        var status = self
        status.drivers = drivers
        return status
    }
}

/// A recording as it starts: the graph then (pw-dump), and the input lines from then on (the
/// live registrations first, as `register` lines at 0), ending when the daemon stops.
public struct InputRecording: Sendable {
    public var graph: JSONValue
    public var lines: AsyncStream<JSONValue>
}
