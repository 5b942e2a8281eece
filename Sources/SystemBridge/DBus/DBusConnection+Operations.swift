import CSystemdBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A method call received on an exported object, read whole on the bus thread.
public struct DBusMethodCall: Sendable {
    public let path: String
    public let interface: String?
    public let member: String
    public let sender: String?
    /// The body's signature (`""` for none).
    public let signature: String
    public let arguments: [DBusValue]
    /// Answer it exactly once, from any thread; unanswered, it is answered with an error
    /// when the last copy goes away.
    public let reply: DBusReply
}

/// A signal that matched a rule given to `addMatch`.
public struct DBusSignal: Sendable {
    public let sender: String?
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]

    /// Public so code that interprets signals can be tested without a bus.
    public init(sender: String?, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// The right to answer one method call.
public final class DBusReply: @unchecked Sendable {
    private let connection: DBusConnection
    /// The call, referenced until answered; touched on the bus thread only.
    private let call: MessageReference
    private let answered = Mutex(false)

    init(connection: DBusConnection, call: OpaquePointer) {
        self.connection = connection
        self.call = MessageReference(sd_bus_message_ref(call))
    }

    deinit {
        let message = call
        let unanswered = answered.withLock { !$0 }
        connection.perform { _ in
            if unanswered {
                DBusReply.replyError(message.pointer, name: "org.freedesktop.DBus.Error.Failed", message: "the call was dropped unanswered")
            }
            sd_bus_message_unref(message.pointer)
        }
    }

    public func callAsFunction(_ values: [DBusValue] = []) { send { call in
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        if (try? SDBusMessageCodec.append(values, to: reply)) == nil {
            DBusReply.replyError(call, name: "org.freedesktop.DBus.Error.Failed", message: "the reply could not be encoded")
            return
        }
        _ = sd_bus_send(nil, reply, nil)
    } }

    /// Answers with the D-Bus error `name` (e.g. `org.example.Error.Unknown`).
    public func fail(name: String, message: String) { send { call in
        DBusReply.replyError(call, name: name, message: message)
    } }

    private func send(_ body: @escaping @Sendable (OpaquePointer) -> Void) {
        let first = answered.withLock { value in
            defer { value = true }
            return !value
        }
        guard first else { return }
        let message = call
        connection.perform { _ in body(message.pointer) }
    }

    static func replyError(_ call: OpaquePointer, name: String, message: String) {
        name.withCString { name in
            message.withCString { message in
                var error = sd_bus_error(name: name, message: message, _need_free: 0)
                _ = sd_bus_reply_method_error(call, &error)
            }
        }
    }
}

extension DBusConnection {
    /// Takes the well-known name `name`; fails with `.nameTaken` if another connection has it.
    public func requestName(_ name: String) async throws(DBusError) {
        try await onBusThread { bus throws(DBusError) in
            let result = sd_bus_request_name(bus, name, 0)
            if result == -EEXIST { throw .nameTaken(name) }
            if result == -EALREADY { return }  // ours already
            try SDBusMessageCodec.check(result, "requesting the name \(name)")
        }
    }

    /// Whether messages on this connection can carry file descriptors (`h` values): agreed
    /// with the bus when connecting (Unix socket transport, and the bus accepts).
    public func canPassFileDescriptors() async throws(DBusError) -> Bool {
        try await onBusThread { bus in sd_bus_can_send(bus, CChar(UInt8(ascii: "h"))) > 0 }
    }

    /// Serves every method call to `path` with `handler` (on the bus thread). The handler
    /// answers through `call.reply`, now or later, from any thread; it also answers
    /// `org.freedesktop.DBus.Introspectable` itself.
    public func exportObject(path: String, handler: @escaping @Sendable (DBusMethodCall) -> Void) async throws(DBusError) {
        try await export(path: path, subtree: false, handler: handler)
    }

    /// Serves every method call to `path` and to any path below it with `handler`, as
    /// `exportObject` does for one path: for a tree of objects that come and go (an
    /// ObjectManager's children), which then need no export or unexport each.
    public func exportSubtree(path: String, handler: @escaping @Sendable (DBusMethodCall) -> Void) async throws(DBusError) {
        try await export(path: path, subtree: true, handler: handler)
    }

    private func export(path: String, subtree: Bool, handler: @escaping @Sendable (DBusMethodCall) -> Void) async throws(DBusError) {
        let box = MethodHandlerBox(connection: self, handler: handler)
        try await onBusThread { [state] bus throws(DBusError) in
            state.retainedHandlers.append(box)
            let callback: sd_bus_message_handler_t = { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<MethodHandlerBox>.fromOpaque(userdata).takeUnretainedValue().handle(message)
            }
            let userdata = Unmanaged.passUnretained(box).toOpaque()
            try SDBusMessageCodec.check(
                subtree ? sd_bus_add_fallback(bus, nil, path, callback, userdata) : sd_bus_add_object(bus, nil, path, callback, userdata),
                "exporting \(path)")
        }
    }

    /// Sends a signal. Errors (a value that cannot be encoded) are dropped: a signal has no
    /// one to report them to.
    public func emitSignal(path: String, interface: String, member: String, _ arguments: [DBusValue]) {
        perform { bus in
            var signal: OpaquePointer?
            guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
            defer { sd_bus_message_unref(signal) }
            guard (try? SDBusMessageCodec.append(arguments, to: signal)) != nil else { return }
            _ = sd_bus_send(bus, signal, nil)
        }
    }

    /// Calls a method and waits for its reply (or error, or `timeout`).
    public func call(
        destination: String, path: String, interface: String, member: String, _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let microseconds = UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000)
        let result: Result<[DBusValue], DBusError> = await withCheckedContinuation { continuation in
            let queued = perform { [state] bus in
                guard !state.isDisconnected else { return continuation.resume(returning: .failure(.disconnected)) }
                var message: OpaquePointer?
                guard sd_bus_message_new_method_call(bus, &message, destination, path, interface, member) >= 0, let message else {
                    return continuation.resume(returning: .failure(.failed(operation: "calling \(member) on \(destination)", errno: EINVAL)))
                }
                defer { sd_bus_message_unref(message) }
                do throws(DBusError) { try SDBusMessageCodec.append(arguments, to: message) } catch {
                    return continuation.resume(returning: .failure(error))
                }
                let waiting = state.wait { continuation.resume(returning: $0) }
                let sent = sd_bus_call_async(bus, nil, message, { reply, userdata, _ in
                    guard let reply, let userdata else { return 0 }
                    Unmanaged<WaitingCall>.fromOpaque(userdata).takeUnretainedValue().complete(with: reply)
                    return 1
                }, Unmanaged.passUnretained(waiting).toOpaque(), microseconds)
                if sent < 0 {
                    waiting.complete(.failure(.failed(operation: "calling \(member) on \(destination)", errno: -sent)))
                }
            }
            if !queued { continuation.resume(returning: .failure(.disconnected)) }
        }
        return try result.get()
    }

    /// Delivers signals matching `rule` (D-Bus match syntax) to `handler`, on the bus thread,
    /// from the moment this returns.
    public func addMatch(_ rule: String, handler: @escaping @Sendable (DBusSignal) -> Void) async throws(DBusError) {
        let box = SignalHandlerBox(handler: handler)
        try await onBusThread { [state] bus throws(DBusError) in
            state.retainedHandlers.append(box)
            try SDBusMessageCodec.check(
                sd_bus_add_match(bus, nil, rule, { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    Unmanaged<SignalHandlerBox>.fromOpaque(userdata).takeUnretainedValue().handle(message)
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()),
                "adding the match \(rule)")
        }
    }
}
