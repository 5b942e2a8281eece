import WireFields
import ControlProtocol
import RoutingPolicy
import Synchronization

/// The subscribers of `watch`/`subscribe` (and the D-Bus signals), and what they were last
/// told about this host's addresses. Thread-safe: a subscriber's stream ends on any thread.
final class EventHub: Sendable {
    /// The live recordings of inputs (`earshot record`): another kind of subscriber.
    let recorder = InputRecorder()
    private struct State {
        var subscribers: [UInt64: AsyncStream<ControlWire.Event>.Continuation] = [:]
        /// The socket's subscribers: each event's line is encoded once and shared by all.
        var lineSubscribers: [UInt64: AsyncStream<[UInt8]>.Continuation] = [:]
        var nextToken: UInt64 = 0
        var closed = false
        /// The host addresses subscribers were last told about (at start, the config's).
        var announcedHostAddresses: [HostAddress]
    }

    private let state: Mutex<State>

    init(hostAddresses: [HostAddress]) {
        state = Mutex(State(announcedHostAddresses: hostAddresses))
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count + $0.lineSubscribers.count } }

    /// Events a subscriber may have waiting before it is cut off (its stream finished: the
    /// socket session then closes the connection). Its session writes each as it comes, so
    /// only a starved pool lets them pile up here; the socket's own bound comes first.
    static let maximumQueuedEvents = 1024

    func publish(_ event: ControlWire.Event) {
        // Yielded outside the lock: a stream's termination handler takes it.
        let (subscribers, lineSubscribers) = state.withLock { (Array($0.subscribers.values), Array($0.lineSubscribers.values)) }
        for subscriber in subscribers {
            if case .dropped = subscriber.yield(event) { subscriber.finish() }
        }
        guard !lineSubscribers.isEmpty else { return }
        // One encoding, one buffer: 300 subscribers queue 300 references to it, not 300 copies.
        let line = Array(ControlWire.line(event))
        for subscriber in lineSubscribers {
            if case .dropped = subscriber.yield(line) { subscriber.finish() }
        }
    }

    /// A subscription for the control socket: each event as its wire line (ending in a
    /// newline), shared by every subscriber; at most `maximumQueuedEvents` waiting, past which
    /// the subscriber is cut off.
    func subscribeLines() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingOldest(Self.maximumQueuedEvents))
        let token = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.nextToken += 1
            state.lineSubscribers[state.nextToken] = continuation
            return state.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.lineSubscribers.removeValue(forKey: token) }
        }
        return stream
    }

    /// Tells subscribers the host addresses in use when they (or their origins) differ from
    /// what they were last told. Called after the engine took an input and before its decision
    /// is published, so the event comes before the route change it causes.
    func announceHostAddresses(_ current: [HostAddress], at wallClock: Int64) {
        let change = state.withLock { state -> ControlWire.HostAddressesEvent? in
            guard let change = ControlWire.HostAddressesEvent(at: wallClock, from: state.announcedHostAddresses, to: current) else { return nil }
            state.announcedHostAddresses = current
            return change
        }
        if let change { publish(.hostAddresses(change)) }
    }

    /// A new subscription. `bounded`: a queue of `maximumQueuedEvents` at most, past which the
    /// subscriber is cut off (clients of the socket); the daemon's own D-Bus signalling is not.
    func subscribe(bounded: Bool = true) -> AsyncStream<ControlWire.Event> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ControlWire.Event.self, bufferingPolicy: bounded ? .bufferingOldest(Self.maximumQueuedEvents) : .unbounded)
        let token = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.nextToken += 1
            state.subscribers[state.nextToken] = continuation
            return state.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: token) }
        }
        return stream
    }

    /// Ends every subscription and recording (the daemon stops).
    func close() {
        recorder.close()
        let (subscribers, lineSubscribers) = state.withLock { state in
            state.closed = true
            defer {
                state.subscribers.removeAll()
                state.lineSubscribers.removeAll()
            }
            return (Array(state.subscribers.values), Array(state.lineSubscribers.values))
        }
        for subscriber in subscribers { subscriber.finish() }
        for subscriber in lineSubscribers { subscriber.finish() }
    }
}
