import AudioGraph
import EarshotDaemon
import RoutingPolicy

/// A stand-in for `Daemon` behind the control seam: keeps registrations in memory and lets a
/// test push events. Enough to exercise the transport; the semantics are the daemon's.
actor InMemoryDaemonControl: DaemonControl {
    private var registrations: [AccessoryIdentity: AccessoryRegistration] = [:]
    private var subscribers: [Int: AsyncStream<DaemonEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var waitingForSubscriber: [CheckedContinuation<Void, Never>] = []

    func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
        switch request {
        case .register(let identity, let reporter, let configuration):
            registrations[identity] = AccessoryRegistration(identity: identity, reporter: reporter, configuration: configuration, registeredAt: 0)
            return .success(configuration)
        case .update(let identity, let update):
            guard var registration = registrations[identity] else {
                return .failure(AccessoryError(.unknown, "no registration for \(identity): register it, then update"))
            }
            if case .set(let placement) = update.placement {
                guard registration.configuration.capabilities.contains(.placement) else {
                    return .failure(AccessoryError(.accessoryNotCapable, "\(identity) did not declare \"placement\""))
                }
                registration.configuration.placement = placement
            }
            registrations[identity] = registration
            return .success(registration.configuration)
        case .unregister(let identity):
            guard registrations.removeValue(forKey: identity) != nil else {
                return .failure(AccessoryError(.unknown, "no registration for \(identity)"))
            }
            return .success(nil)
        }
    }

    func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
        guard let registration = registrations[identity] else {
            return .failure(AccessoryError(.unknown, "no registration for \(identity)"))
        }
        return .success(registration.configuration)
    }

    func list() async -> [AccessoryStatus] {
        registrations.values.map { AccessoryStatus(registration: $0, isStale: false, sinks: []) }
    }

    func status() async -> DaemonStatus {
        return DaemonStatus(mode: .standalone, remote: "pipewire-0", connected: true, sessionManager: nil, decision: nil)
    }

    func subscribe() async -> AsyncStream<DaemonEvent> {
        let id = nextSubscriber
        nextSubscriber += 1
        // Unbounded, as a daemon's may be: the server must not rely on the stream to drop.
        let (stream, continuation) = AsyncStream<DaemonEvent>.makeStream()
        continuation.onTermination = { _ in Task { await self.drop(id) } }
        subscribers[id] = continuation
        for waiter in waitingForSubscriber { waiter.resume() }
        waitingForSubscriber = []
        return stream
    }

    /// Returns once someone subscribed (at once if someone has).
    func waitForSubscriber() async {
        guard subscribers.isEmpty else { return }
        await withCheckedContinuation { waitingForSubscriber.append($0) }
    }

    var subscriberCount: Int { subscribers.count }

    func emit(_ event: DaemonEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    func finishSubscriptions() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    private func drop(_ id: Int) { subscribers[id] = nil }
}

extension DaemonEvent {
    static func route(_ reason: RouteChangeReason = .placementChanged, from previous: String? = "speakers", to current: String? = "headphones",
                      summary: String = "2/2 sinks eligible") -> DaemonEvent {
        .routeChanged(RouteChange(at: 1_700_000_000_000, reason: reason, previous: previous, current: current, accessory: "AA:BB:CC:DD:EE:FF", summary: summary))
    }
}
