import RoutingPolicy
import Synchronization

/// The subscribers of `watch`/`subscribe` (and the D-Bus signals), and what they were last
/// told about this host's addresses. Thread-safe: a subscriber's stream ends on any thread.
final class EventHub: Sendable {
    /// The live recordings of inputs (`earshot record`): another kind of subscriber.
    let recorder = InputRecorder()
    private struct State {
        var subscribers: [UInt64: AsyncStream<DaemonEvent>.Continuation] = [:]
        var nextToken: UInt64 = 0
        var closed = false
        /// The host addresses subscribers were last told about (at start, the config's).
        var announcedHostAddresses: [HostAddress]
    }

    private let state: Mutex<State>

    init(hostAddresses: [HostAddress]) {
        state = Mutex(State(announcedHostAddresses: hostAddresses))
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    func publish(_ event: DaemonEvent) {
        // Yielded outside the lock: a stream's termination handler takes it.
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// Tells subscribers the host addresses in use when they (or their origins) differ from
    /// what they were last told. Called after the engine took an input and before its decision
    /// is published, so the event comes before the route change it causes.
    func announceHostAddresses(_ current: [HostAddress], at wallClock: Int64) {
        let change = state.withLock { state -> HostAddressesChange? in
            guard let change = HostAddressesChange(at: wallClock, from: state.announcedHostAddresses, to: current) else { return nil }
            state.announcedHostAddresses = current
            return change
        }
        if let change { publish(.hostAddressesChanged(change)) }
    }

    func subscribe() -> AsyncStream<DaemonEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .unbounded)
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
        let subscribers = state.withLock { state in
            state.closed = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
