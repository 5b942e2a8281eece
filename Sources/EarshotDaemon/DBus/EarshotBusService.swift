import ControlProtocol
import Logging
import RoutingPolicy
import Synchronization
import SystemBridge

/// Earshot on the session bus: `org.earshot.Earshot1` at `/org/earshot/Earshot1` (see
/// dbus/org.earshot.Earshot1.xml and docs/dbus.md). Methods go to the daemon through
/// `DaemonControl`, as the control socket's requests do; the daemon's events go out as signals.
final class EarshotBusService: Sendable {
    static let busName = "org.earshot.Earshot1"
    static let objectPath = "/org/earshot/Earshot1"
    static let interface = "org.earshot.Earshot1"

    /// What a call waiting for the daemon asks for.
    fileprivate enum Request: Sendable {
        case method(EarshotBusMethod)
        case property(EarshotBusPropertyRead)

        /// Answered from the daemon's state, changing nothing.
        var isRead: Bool {
            switch self {
            case .property, .method(.status), .method(.list), .method(.current): true
            case .method(.register), .method(.update), .method(.unregister): false
            }
        }
    }

    fileprivate typealias QueuedCall = (call: DBusMethodCall, request: Request)
    private let calls: CallQueue
    private let reads: CallQueue
    private let tasks: [Task<Void, Never>]

    private init(calls: CallQueue, reads: CallQueue, tasks: [Task<Void, Never>]) {
        self.calls = calls
        self.reads = reads
        self.tasks = tasks
    }

    /// Most calls waiting for the daemon, per queue: one beyond is refused (the caller is told
    /// to slow down), never held without end.
    static let maximumQueuedCalls = 4096

    /// Calls waiting, in the order the bus delivered them: bounded, and taken a batch at a time
    /// so consecutive updates of one accessory can be answered by one (issue 21).
    fileprivate final class CallQueue: Sendable {
        private let waiting = Mutex<(calls: [QueuedCall], finished: Bool)>(([], false))
        let wakes: AsyncStream<Void>
        private let wake: AsyncStream<Void>.Continuation

        init() { (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }

        /// False when the queue is full (or finished): the caller answers the call itself.
        func add(_ call: QueuedCall) -> Bool {
            let added = waiting.withLock { state in
                guard !state.finished, state.calls.count < EarshotBusService.maximumQueuedCalls else { return false }
                state.calls.append(call)
                return true
            }
            if added { wake.yield() }
            return added
        }

        func takeAll() -> [QueuedCall] {
            waiting.withLock { state in
                defer { state.calls = [] }
                return state.calls
            }
        }

        func finish() {
            waiting.withLock { $0.finished = true }
            wake.finish()
        }
    }

    /// The service on `bus`, if there is one. Only a name owned by another process (another
    /// earshot) is thrown, since the daemon must not run twice; any other failure is logged and
    /// the daemon goes on without the service, as it does without a session bus.
    static func serve(on bus: DBusConnection?, control: any DaemonControl, logger: Logger) async throws(DBusError) -> EarshotBusService? {
        guard let bus else { return nil }
        do throws(DBusError) {
            return try await start(on: bus, control: control, logger: logger)
        } catch {
            if case .nameTaken = error { throw error }
            logger.warning("the D-Bus service \(busName) is off: \(error)")
            return nil
        }
    }

    /// Exports the object, subscribes to the daemon's events, then takes the name, so a client
    /// that sees the name finds the methods and gets every signal from then on. Throws
    /// `.nameTaken` when another process (another earshot) owns the name.
    static func start(on bus: DBusConnection, control: any DaemonControl, logger: Logger) async throws(DBusError) -> EarshotBusService {
        // Changes on one queue, applied in the order the bus delivered them, so a client that
        // does not wait for a reply still has its Register applied before its Update; reads
        // (properties, Status, List, Current) on another, so they never wait behind changes.
        let calls = CallQueue()
        let reads = CallQueue()
        try await bus.exportObject(path: objectPath) { call in
            guard let request = route(call) else { return }
            let queue = request.isRead ? reads : calls
            if !queue.add((call, request)) {
                call.reply.fail(
                    name: EarshotBusErrorName.name(for: .invalidRequest),
                    message: "\(maximumQueuedCalls) calls are waiting already: slow down (wait for replies before sending more)")
            }
        }
        let events = await control.subscribeForSignals()
        let signalling = Task {
            for await event in events {
                for signal in EarshotBusSignals.signals(for: event) {
                    bus.emitSignal(path: objectPath, interface: interface, member: signal.member, signal.arguments)
                }
                if let changed = EarshotBusProperty.changedSignal(for: event) {
                    bus.emitSignal(path: objectPath, interface: EarshotBusPropertyRead.interface, member: "PropertiesChanged", changed)
                }
            }
        }
        let reading = Task {
            for await _ in reads.wakes {
                for queuedCall in reads.takeAll() {
                    switch queuedCall.request {
                    case .method(let method): await answer(queuedCall.call, method, control)
                    case .property(let read): await answer(queuedCall.call, read, control)
                    }
                }
            }
        }
        let serving = Task {
            for await _ in calls.wakes {
                var batch = calls.takeAll()[...]
                while let first = batch.popFirst() {
                    // Consecutive placement-only updates of one accessory by one reporter: the
                    // newest is applied once and answers them all (a chattering client costs
                    // one decision per batch, not one per call).
                    var same: [DBusMethodCall] = []
                    if case .method(.update) = first.request, case .success(let request) = EarshotBusRequests.update(first.call.arguments),
                        Self.isPlacementOnly(request)
                    {
                        var newest = request
                        while let next = batch.first, case .method(.update) = next.request,
                            case .success(let following) = EarshotBusRequests.update(next.call.arguments), Self.isPlacementOnly(following),
                            following.identity == request.identity, following.reporter == request.reporter
                        {
                            same.append(next.call)
                            newest = following
                            batch.removeFirst()
                        }
                        if !same.isEmpty {
                            await answerUpdate(newest, calls: [first.call] + same, control)
                            continue
                        }
                    }
                    switch first.request {
                    case .method(let method): await answer(first.call, method, control)
                    case .property(let read): await answer(first.call, read, control)
                    }
                }
            }
        }
        let service = EarshotBusService(calls: calls, reads: reads, tasks: [signalling, serving, reading])
        do {
            try await bus.requestName(busName)
        } catch {
            service.stop()
            throw error
        }
        logger.info("D-Bus service \(busName) at \(objectPath) on the session bus")
        return service
    }

    /// Stops answering and signalling. The name goes with the bus connection.
    func stop() {
        calls.finish()
        reads.finish()
        for task in tasks { task.cancel() }
    }

    /// On the bus thread: answers what needs no daemon (introspection, calls that do not fit
    /// the interface, Set) and returns what a call asks of the daemon, to queue.
    private static func route(_ call: DBusMethodCall) -> Request? {
        switch call.interface {
        case "org.freedesktop.DBus.Introspectable" where call.member == "Introspect":
            call.reply([.string(EarshotBusIntrospection.xml)])
            return nil
        case EarshotBusPropertyRead.interface?:
            return EarshotBusPropertyRead.route(call).map(Request.property)
        case interface?, nil:
            guard let method = EarshotBusMethod(rawValue: call.member) else {
                call.reply.fail(name: EarshotBusErrorName.unknownMethod, message: "\(interface) has no method \(call.member): its methods are \(EarshotBusMethod.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            guard call.signature == method.signature else {
                let got = call.signature.isEmpty ? "no arguments" : "(\(call.signature))"
                call.reply.fail(name: EarshotBusErrorName.invalidArgs, message: "\(method.rawValue) takes \(method.arguments), not \(got)")
                return nil
            }
            return .method(method)
        case let other?:
            call.reply.fail(name: EarshotBusErrorName.unknownInterface, message: "\(objectPath) has no interface \(other): it has \(interface), org.freedesktop.DBus.Properties and org.freedesktop.DBus.Introspectable")
            return nil
        }
    }

    /// An update that changes only the placement.
    private static func isPlacementOnly(_ request: AccessoryRequest) -> Bool {
        guard case .update(_, let update, _) = request else { return false }
        return update.primarySource == .keep && update.secondarySource == .keep
    }

    /// One update applied for several calls that asked for it (the newest of a run): each gets
    /// the same answer.
    private static func answerUpdate(_ request: AccessoryRequest, calls: [DBusMethodCall], _ control: any DaemonControl) async {
        switch await control.perform(request) {
        case .success(let configuration):
            let values: [DBusValue] = configuration.map { [EarshotBusValues.accessory(request.identity, $0)] } ?? [.properties([:])]
            for call in calls { call.reply(values) }
        case .failure(let error):
            for call in calls { call.reply.fail(name: EarshotBusErrorName.name(for: error.code), message: error.message) }
        }
    }

    private static func answer(_ call: DBusMethodCall, _ method: EarshotBusMethod, _ control: any DaemonControl) async {
        let reply: Result<[DBusValue], AccessoryError>
        switch method {
        case .register, .update:
            let request = method == .register ? EarshotBusRequests.register(call.arguments) : EarshotBusRequests.update(call.arguments)
            reply = await request.asyncFlatMap { request in
                switch await control.perform(request) {
                case .failure(let error): return .failure(error)
                case .success(nil): return .success([.properties([:])])
                case .success(let configuration?):
                    guard case .register = request else { return .success([EarshotBusValues.accessory(request.identity, configuration)]) }
                    let warnings = await control.warnings(after: request)
                    return .success([EarshotBusValues.registered(request.identity, configuration, warnings: warnings)])
                }
            }
        case .current:
            reply = await EarshotBusRequests.identity(call.arguments, method: method).asyncFlatMap { identity in
                await control.current(identity).map { [EarshotBusValues.accessory(identity, $0)] }
            }
        case .unregister:
            reply = await EarshotBusRequests.unregister(call.arguments).asyncFlatMap { request in
                await control.perform(request).map { _ in [] }
            }
        case .list:
            reply = .success([EarshotBusValues.accessories(ControlWire.ListedAccessory.sorted(await control.list()))])
        case .status:
            reply = .success([EarshotBusValues.status(await control.status())])
        }
        switch reply {
        case .success(let values): call.reply(values)
        case .failure(let error): call.reply.fail(name: EarshotBusErrorName.name(for: error.code), message: error.message)
        }
    }
}

extension EarshotBusService {
    /// Get and GetAll, from the status `Status` answers with.
    private static func answer(_ call: DBusMethodCall, _ read: EarshotBusPropertyRead, _ control: any DaemonControl) async {
        let status = await control.status()
        switch read {
        case .one(let property): call.reply([.variant(property.value(in: status))])
        case .all: call.reply([EarshotBusProperty.all(in: status)])
        }
    }
}

extension Result where Failure == AccessoryError {
    /// `flatMap` with an async transform: validate, then ask the daemon.
    fileprivate func asyncFlatMap<Next>(_ transform: (Success) async -> Result<Next, AccessoryError>) async -> Result<Next, AccessoryError> {
        switch self {
        case .success(let value): await transform(value)
        case .failure(let error): .failure(error)
        }
    }
}
