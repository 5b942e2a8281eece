import WireFields
import ControlProtocol
import RoutingPolicy
import Synchronization

/// The subscribers of `watch`/`subscribe` (and the D-Bus signals), and what they were last
/// told about this host's addresses. Thread-safe: a subscriber's stream ends on any thread.
final class EventHub: Sendable {
    /// The live recordings of inputs (`earshot record`): another kind of subscriber.
    let recorder = InputRecorder()
    private let subscribers = StreamListeners<ControlWire.Event>()
    /// The socket's subscribers: each event's line is encoded once and shared by all.
    private let lineSubscribers = StreamListeners<[UInt8]>()
    /// The host addresses subscribers were last told about (at start, the config's).
    private let announcedHostAddresses: Mutex<[HostAddress]>

    init(hostAddresses: [HostAddress]) {
        announcedHostAddresses = Mutex(hostAddresses)
    }

    var subscriberCount: Int { subscribers.count + lineSubscribers.count }

    /// Events a subscriber may have waiting before it is cut off (its stream finished: the
    /// socket session then closes the connection). Its session writes each as it comes, so
    /// only a starved pool lets them pile up here; the socket's own bound comes first.
    static let maximumQueuedEvents = 1024

    func publish(_ event: ControlWire.Event) {
        subscribers.yield(event)
        guard !lineSubscribers.isEmpty else { return }
        // One encoding, one buffer: 300 subscribers queue 300 references to it, not 300 copies.
        lineSubscribers.yield(Array(ControlWire.line(event)))
    }

    /// A subscription for the control socket: each event as its wire line (ending in a
    /// newline), shared by every subscriber; at most `maximumQueuedEvents` waiting, past which
    /// the subscriber is cut off.
    func subscribeLines() -> AsyncStream<[UInt8]> {
        lineSubscribers.subscribe(bufferingPolicy: .bufferingOldest(Self.maximumQueuedEvents))
    }

    /// Tells subscribers the host addresses in use when they (or their origins) differ from
    /// what they were last told. Called after the engine took an input and before its decision
    /// is published, so the event comes before the route change it causes.
    func announceHostAddresses(_ current: [HostAddress], at wallClock: Int64) {
        let change = announcedHostAddresses.withLock { announced -> ControlWire.HostAddressesEvent? in
            guard let change = ControlWire.HostAddressesEvent(at: wallClock, from: announced, to: current) else { return nil }
            announced = current
            return change
        }
        if let change { publish(.hostAddresses(change)) }
    }

    /// A new subscription. `bounded`: a queue of `maximumQueuedEvents` at most, past which the
    /// subscriber is cut off (clients of the socket); the daemon's own D-Bus signalling is not.
    func subscribe(bounded: Bool = true) -> AsyncStream<ControlWire.Event> {
        subscribers.subscribe(bufferingPolicy: bounded ? .bufferingOldest(Self.maximumQueuedEvents) : .unbounded)
    }

    /// Ends every subscription and recording (the daemon stops).
    func close() {
        recorder.close()
        subscribers.close()
        lineSubscribers.close()
    }
}
