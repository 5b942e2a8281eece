import WireFields
import ControlProtocol
import AudioGraph
import EarshotDaemon
import RoutingPolicy

/// A stand-in for `Daemon` behind the control seam: keeps registrations in memory and lets a
/// test push events. Enough to exercise the transports (socket, CLI); the semantics are the
/// daemon's.
public actor InMemoryDaemonControl: DaemonControl {
    private var registrations: [AccessoryIdentity: AccessoryRegistration] = [:]
    private var subscribers: [Int: AsyncStream<ControlWire.Event>.Continuation] = [:]
    private var nextSubscriber = 0
    private var awaiting: [UInt64: (awaited: Awaited, waiter: CheckedContinuation<Void, Never>)] = [:]
    private var expired: Set<UInt64> = []
    private var nextWait: UInt64 = 0
    private let reportedStatus: ControlWire.Status
    /// Every accessory request performed, as the transport handed it over.
    public private(set) var performed: [AccessoryRequest] = []

    /// `status` answers what it is given (by default: standalone, connected, no decision).
    public init(status: ControlWire.Status = ControlWire.Status(mode: .standalone, remote: "pipewire-0", connected: true, sessionManager: nil, decision: nil)) {
        reportedStatus = status
    }

    public func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
        if changesHeld {
            await withCheckedContinuation { held in
                heldChanges.append(held)
                for waiter in heldWaiters { waiter.resume() }
                heldWaiters = []
            }
        }
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

    // Held changes: a test sees what a transport answers while a change is being applied.
    private var changesHeld = false
    private var heldChanges: [CheckedContinuation<Void, Never>] = []
    private var heldWaiters: [CheckedContinuation<Void, Never>] = []

    /// Changes (`perform`) wait from now on until `releaseChanges`.
    public func holdChanges() { changesHeld = true }

    /// Lets every held change, and those to come, go on.
    public func releaseChanges() {
        changesHeld = false
        for held in heldChanges { held.resume() }
        heldChanges = []
    }

    /// Returns once a change is waiting at the hold (at once if one is).
    public func waitForHeldChange() async {
        guard heldChanges.isEmpty else { return }
        await withCheckedContinuation { heldWaiters.append($0) }
    }

    public func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
        guard let registration = registrations[identity] else {
            return .failure(AccessoryError(.unknown, "no registration for \(identity)"))
        }
        return .success(registration.configuration)
    }

    public func list() async -> [ControlWire.ListedAccessory] {
        registrations.values.map { ControlWire.ListedAccessory($0, stale: false, sinks: []) }
    }

    /// How many times `status` was asked.
    public private(set) var statusCalls = 0

    public func status() async -> ControlWire.Status {
        statusCalls += 1
        return reportedStatus
    }

    public func subscribe() async -> AsyncStream<ControlWire.Event> {
        let id = nextSubscriber
        nextSubscriber += 1
        // Unbounded, as a daemon's may be: the server must not rely on the stream to drop.
        let (stream, continuation) = AsyncStream<ControlWire.Event>.makeStream()
        continuation.onTermination = { _ in Task { await self.drop(id) } }
        subscribers[id] = continuation
        subscribersChanged()
        return stream
    }

    /// Returns once someone subscribed (at once if someone has).
    public func waitForSubscriber() async {
        _ = await until(.subscriber, timeout: nil)
    }

    /// The same, failing after `timeout`.
    public func waitForSubscriber(timeout: Duration) async throws {
        guard await until(.subscriber, timeout: timeout) else { throw FixtureError("no subscriber within \(timeout)") }
    }

    public var subscriberCount: Int { subscribers.count }

    /// Returns once every subscription has ended (the server dropped its subscribers), failing
    /// after `timeout`.
    public func waitForNoSubscribers(timeout: Duration) async throws {
        guard await until(.noSubscriber, timeout: timeout) else {
            throw FixtureError("\(subscribers.count) subscriptions still open after \(timeout)")
        }
    }

    /// What a test waits for.
    private enum Awaited {
        case subscriber, noSubscriber

        func holds(_ subscribers: Int) -> Bool { self == .subscriber ? subscribers > 0 : subscribers == 0 }
    }

    /// Whether `awaited` came true within `timeout` (nil: no limit). Each wait has a number of
    /// its own: the deadline ends that wait only, even one not yet begun, and a wait that was
    /// answered leaves nothing behind.
    private func until(_ awaited: Awaited, timeout: Duration?) async -> Bool {
        guard !awaited.holds(subscribers.count) else { return true }
        nextWait += 1
        let id = nextWait
        defer { expired.remove(id) }
        guard let timeout else {
            await wait(id, for: awaited)
            return true
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.wait(id, for: awaited)
                return await awaited.holds(self.subscribers.count)
            }
            group.addTask {
                // The deadline; cancelled, the wait above came first.
                guard (try? await Task.sleep(for: timeout)) != nil else { return false }
                await self.expire(id)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func wait(_ id: UInt64, for awaited: Awaited) async {
        guard !awaited.holds(subscribers.count), !expired.contains(id) else { return }
        await withCheckedContinuation { awaiting[id] = (awaited, $0) }
    }

    private func expire(_ id: UInt64) {
        expired.insert(id)
        awaiting.removeValue(forKey: id)?.waiter.resume()
    }

    /// Answers the waits the subscribers' count now satisfies.
    private func subscribersChanged() {
        for (id, entry) in awaiting where entry.awaited.holds(subscribers.count) {
            awaiting[id] = nil
            entry.waiter.resume()
        }
    }

    public func emit(_ event: ControlWire.Event) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    public func finishSubscriptions() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
        subscribersChanged()
    }

    private func drop(_ id: Int) {
        subscribers[id] = nil
        subscribersChanged()
    }
}

extension ControlWire.Event {
    /// A route change with test defaults.
    public static func route(_ reason: RouteChangeReason = .placementChanged, from previous: String? = "speakers", to current: String? = "headphones",
                      summary: String = "2/2 sinks eligible") -> ControlWire.Event {
        .routeChange(ControlWire.RouteChangeEvent(at: 1_700_000_000_000, reason: reason, previous: previous, current: current, accessory: "AA:BB:CC:DD:EE:FF", summary: summary))
    }
}
