import WireFields
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
    func list() async -> [ControlWire.ListedAccessory]
    /// status: mode, connection and the current decision with its explanation.
    func status() async -> ControlWire.Status
    /// subscribe: route changes, accessory, playback and host-address events from now on,
    /// until the stream is dropped.
    func subscribe() async -> AsyncStream<ControlWire.Event>
    /// The same events for the daemon's own D-Bus signalling: never cut off.
    func subscribeForSignals() async -> AsyncStream<ControlWire.Event>
    /// The same events for the control socket, each as its wire line.
    func subscribeLines() async -> AsyncStream<[UInt8]>
    /// What a successful request's reply warns about (a register naming a node.name no sink
    /// has now): the request stands, but may not do what its sender meant.
    func warnings(after request: AccessoryRequest) async -> [String]
    /// The reporter that registered `identity` (nil when none): `current` replies name it.
    func reporter(of identity: AccessoryIdentity) async -> String?
    /// The built-in driver driving `identity`'s device, if one does: `current` replies show it.
    func driver(of identity: AccessoryIdentity) async -> ControlWire.DriverEntry?
    /// A recording of the inputs from now (`earshot record`); asked for before the daemon's
    /// first graph, it begins with that graph (waiting for it). Nil when too many run already,
    /// or the daemon stops first.
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
    public func driver(of identity: AccessoryIdentity) async -> ControlWire.DriverEntry? { nil }
    public func startRecording() async -> InputRecording? { nil }
    public func subscribeForSignals() async -> AsyncStream<ControlWire.Event> { await subscribe() }

    public func subscribeLines() async -> AsyncStream<[UInt8]> {
        let events = await subscribe()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events { continuation.yield(Array(ControlWire.line(event))) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A recording as it starts: the graph then (pw-dump), and the input lines from then on (the
/// live registrations first, as `register` lines at 0), ending when the daemon stops.
public struct InputRecording: Sendable {
    public var graph: JSONValue
    public var lines: AsyncStream<JSONValue>
}
