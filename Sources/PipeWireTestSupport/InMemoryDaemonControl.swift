import AudioGraph
import EarshotDaemon
import RoutingPolicy

/// A stand-in for `Daemon` behind the control seam: keeps registrations in memory and lets a
/// test push events. Enough to exercise the transports (socket, CLI); the semantics are the
/// daemon's.
public actor InMemoryDaemonControl: DaemonControl {
    private var registrations: [AccessoryIdentity: AccessoryRegistration] = [:]
    private var subscribers: [Int: AsyncStream<DaemonEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var waitingForSubscriber: [CheckedContinuation<Void, Never>] = []
    private var waitingForNoSubscriber: [CheckedContinuation<Void, Never>] = []
    private let reportedStatus: DaemonStatus
    /// Every accessory request performed, as the transport handed it over.
    public private(set) var performed: [AccessoryRequest] = []

    /// `status` answers what it is given (by default: standalone, connected, no decision).
    public init(status: DaemonStatus = DaemonStatus(mode: .standalone, remote: "pipewire-0", connected: true, sessionManager: nil, decision: nil)) {
        reportedStatus = status
    }

    public func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
        performed.append(request)
        switch request {
        case .register(let identity, let reporter, let configuration):
            registrations[identity] = AccessoryRegistration(identity: identity, reporter: reporter, configuration: configuration, registeredAt: 0)
            return .success(configuration)
        case .update(let identity, let update, _):
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
        case .unregister(let identity, _):
            guard registrations.removeValue(forKey: identity) != nil else {
                return .failure(AccessoryError(.unknown, "no registration for \(identity)"))
            }
            return .success(nil)
        }
    }

    public func reporter(of identity: AccessoryIdentity) async -> String? { registrations[identity]?.reporter }

    public func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
        guard let registration = registrations[identity] else {
            return .failure(AccessoryError(.unknown, "no registration for \(identity)"))
        }
        return .success(registration.configuration)
    }

    public func list() async -> [AccessoryStatus] {
        registrations.values.map { AccessoryStatus(registration: $0, isStale: false, sinks: []) }
    }

    public func status() async -> DaemonStatus { reportedStatus }

    public func subscribe() async -> AsyncStream<DaemonEvent> {
        let id = nextSubscriber
        nextSubscriber += 1
        // Unbounded, as a daemon's may be: the server must not rely on the stream to drop.
        let (stream, continuation) = AsyncStream<DaemonEvent>.makeStream()
        continuation.onTermination = { _ in Task { await self.drop(id) } }
        subscribers[id] = continuation
        answerSubscriberWaiters()
        return stream
    }

    /// Returns once someone subscribed (at once if someone has).
    public func waitForSubscriber() async {
        guard subscribers.isEmpty else { return }
        await withCheckedContinuation { waitingForSubscriber.append($0) }
    }

    /// The same, failing after `timeout` (the wait is answered then, so nothing is left behind).
    public func waitForSubscriber(timeout: Duration) async throws {
        guard try await until({ !$0.subscribers.isEmpty }, wait: { await $0.waitForSubscriber() },
                              answer: { $0.answerSubscriberWaiters() }, timeout: timeout) else {
            throw FixtureError("no subscriber within \(timeout)")
        }
    }

    private func answerSubscriberWaiters() {
        for waiter in waitingForSubscriber { waiter.resume() }
        waitingForSubscriber = []
    }

    public var subscriberCount: Int { subscribers.count }

    /// Returns once every subscription has ended (the server dropped its subscribers), failing
    /// after `timeout`.
    public func waitForNoSubscribers(timeout: Duration) async throws {
        guard try await until({ $0.subscribers.isEmpty }, wait: { await $0.untilNoSubscribers() },
                              answer: { $0.answerNoSubscriberWaiters() }, timeout: timeout) else {
            throw FixtureError("\(subscribers.count) subscriptions still open after \(timeout)")
        }
    }

    /// Whether `holds` came true within `timeout`: `wait` returns when it may have, `answer`
    /// ends a `wait` still waiting at the deadline (so no task is left behind).
    private func until(
        _ holds: @escaping @Sendable (isolated InMemoryDaemonControl) -> Bool, wait: @escaping @Sendable (isolated InMemoryDaemonControl) async -> Void,
        answer: @escaping @Sendable (isolated InMemoryDaemonControl) -> Void, timeout: Duration
    ) async throws -> Bool {
        guard !holds(self) else { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await wait(self)
                return await holds(self)
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // the deadline
                await answer(self)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func untilNoSubscribers() async {
        guard !subscribers.isEmpty else { return }
        await withCheckedContinuation { waitingForNoSubscriber.append($0) }
    }

    private func answerNoSubscriberWaiters() {
        for waiter in waitingForNoSubscriber { waiter.resume() }
        waitingForNoSubscriber = []
    }

    public func emit(_ event: DaemonEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    public func finishSubscriptions() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    private func drop(_ id: Int) {
        subscribers[id] = nil
        if subscribers.isEmpty { answerNoSubscriberWaiters() }
    }
}

extension DaemonEvent {
    /// A route change with test defaults.
    public static func route(_ reason: RouteChangeReason = .placementChanged, from previous: String? = "speakers", to current: String? = "headphones",
                      summary: String = "2/2 sinks eligible") -> DaemonEvent {
        .routeChanged(RouteChange(at: 1_700_000_000_000, reason: reason, previous: previous, current: current, accessory: "AA:BB:CC:DD:EE:FF", summary: summary))
    }
}
