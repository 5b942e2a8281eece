import Logging
import RoutingPolicy
import SystemBridge

/// Earshot on the session bus: `org.earshot.Earshot1` at `/org/earshot/Earshot1` (see
/// dbus/org.earshot.Earshot1.xml and docs/dbus.md). Methods go to the daemon through
/// `DaemonControl`, as the control socket's requests do; the daemon's events go out as signals.
final class EarshotBusService: Sendable {
    static let busName = "org.earshot.Earshot1"
    static let objectPath = "/org/earshot/Earshot1"
    static let interface = "org.earshot.Earshot1"

    /// What a call waiting for the daemon asks for.
    private enum Request: Sendable {
        case method(EarshotBusMethod)
        case property(EarshotBusPropertyRead)
    }

    private typealias QueuedCall = (call: DBusMethodCall, request: Request)
    private let calls: AsyncStream<QueuedCall>.Continuation
    private let tasks: [Task<Void, Never>]

    private init(calls: AsyncStream<QueuedCall>.Continuation, tasks: [Task<Void, Never>]) {
        self.calls = calls
        self.tasks = tasks
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
        // One queue for every call, answered in the order the bus delivered them, so a client
        // that does not wait for a reply still has its Register applied before its Update.
        let (queued, calls) = AsyncStream.makeStream(of: QueuedCall.self)
        try await bus.exportObject(path: objectPath) { call in
            if let request = route(call) { calls.yield((call, request)) }
        }
        let events = await control.subscribe()
        let signalling = Task {
            for await event in events {
                let signal = EarshotBusValues.signal(event)
                bus.emitSignal(path: objectPath, interface: interface, member: signal.member, signal.arguments)
                // RouteChanged keeps its 0.2 arguments; the ports follow in a signal of their own.
                if let ports = EarshotBusValues.portSignal(event) {
                    bus.emitSignal(path: objectPath, interface: interface, member: ports.member, ports.arguments)
                }
                if let changed = EarshotBusProperty.changedSignal(for: event) {
                    bus.emitSignal(path: objectPath, interface: EarshotBusPropertyRead.interface, member: "PropertiesChanged", changed)
                }
            }
        }
        let serving = Task {
            for await queuedCall in queued {
                switch queuedCall.request {
                case .method(let method): await answer(queuedCall.call, method, control)
                case .property(let read): await answer(queuedCall.call, read, control)
                }
            }
        }
        let service = EarshotBusService(calls: calls, tasks: [signalling, serving])
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
            reply = .success([EarshotBusValues.accessories(await control.list().sorted { $0.registration.identity < $1.registration.identity })])
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
