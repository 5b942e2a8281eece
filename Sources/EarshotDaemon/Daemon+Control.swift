import AudioGraph
import RoutingPolicy

/// The control API's operations on the live engine.
extension Daemon: DaemonControl {
    public func perform(_ request: AccessoryRequest) async -> Result<AccessoryConfiguration?, AccessoryError> {
        let outcome = engine.handle(.accessory(request), at: now)
        if let error = outcome.decision.error {
            lastDecision = outcome.decision
            return .failure(error)
        }
        let identity = request.identity
        staleAccessories.remove(identity)
        let configuration = engine.accessories[identity]?.registration.configuration
        let kind: AccessoryChange.Kind
        switch request {
        case .register: kind = .registered
        case .update: kind = .updated
        case .unregister: kind = .unregistered
        }
        publish(.accessoryChanged(AccessoryChange(
            at: Self.wallClock, kind: kind, accessory: identity.description,
            reporter: engine.accessories[identity]?.registration.reporter, configuration: configuration)))
        await process(outcome)
        // After applying: the switch is not delayed by the disk.
        await saveStateAndWait()
        return .success(configuration)
    }

    public func current(_ identity: AccessoryIdentity) async -> Result<AccessoryConfiguration, AccessoryError> {
        engine.current(identity)
    }

    public func list() async -> [AccessoryStatus] {
        let graph = engine.graph
        return engine.accessories.entries.values.map(\.registration).sorted { $0.identity < $1.identity }.map { registration in
            let sinks = graph.sinks.filter { sink in
                switch registration.identity {
                case .address(let address): graph.bluetoothAddress(of: sink).flatMap(BluetoothAddress.init) == address
                case .nodeName(let name): sink.name == name
                }
            }.compactMap(\.name)
            return AccessoryStatus(registration: registration, isStale: staleAccessories.contains(registration.identity), sinks: sinks)
        }
    }

    public func status() async -> DaemonStatus {
        // The latest ranking, with the reason, previous route and trigger of the change that set it.
        var decision = lastDecision
        if let change = lastRouteChange, decision?.changed == false, decision?.defaultSink == change.defaultSink {
            decision?.reason = change.reason
            decision?.previous = change.previous
            decision?.trigger = change.trigger
        }
        return DaemonStatus(
            mode: mode, remote: connection?.remoteName ?? options.remote ?? "pipewire-0", connected: connection != nil,
            sessionManager: sessionManager, decision: decision, subscribers: subscribers.count,
            hostAddresses: engine.knownHostAddresses)
    }

    public func subscribe() async -> AsyncStream<DaemonEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .unbounded)
        nextSubscriber += 1
        let token = nextSubscriber
        subscribers[token] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(token) }
        }
        return stream
    }

    private func unsubscribe(_ token: UInt64) {
        subscribers[token] = nil
    }
}
