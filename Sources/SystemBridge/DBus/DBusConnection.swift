import CSystemdBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus bus through sd-bus, driven by a thread of its own.
///
/// sd-bus is not thread-safe, so the `sd_bus` is touched only on the connection's **bus
/// thread**; every public method may be called from any thread and hands its work over to it
/// (a queue plus an eventfd that wakes the thread's `poll`). Method-call and signal handlers
/// run on the bus thread: keep them short and hand work on. The bus thread keeps the connection
/// alive until `close()`, which stops the thread, fails calls still waiting for replies and
/// frees the bus: always close a connection you opened.
public final class DBusConnection: @unchecked Sendable {
    public enum Bus: Sendable, Hashable, CustomStringConvertible {
        /// `$DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
        case session
        /// `$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`.
        case system
        case address(String)

        public var description: String {
            switch self {
            case .session: "session"
            case .system: "system"
            case .address(let address): address
            }
        }
    }

    private let bus: OpaquePointer
    private let wakeFD: Int32
    private let loop: BusThreadState
    /// Work for the bus thread, and whether `close()` has begun: one lock, so no work can be
    /// queued after the last drain and be left waiting forever.
    private let queue = Mutex(WorkQueue())
    private var thread: pthread_t?
    /// The well-known bus name the peer sees us by (`:1.42`).
    public let uniqueName: String

    /// Connects and starts the bus thread. `onDisconnect` runs once, on the bus thread, if the
    /// bus goes away (not after `close()`).
    public init(_ which: Bus, onDisconnect: (@Sendable () -> Void)? = nil) throws(DBusError) {
        var opened: OpaquePointer?
        let result: Int32
        switch which {
        case .session: result = sd_bus_open_user(&opened)
        case .system: result = sd_bus_open_system(&opened)
        case .address(let address): result = Self.open(address: address, &opened)
        }
        guard result >= 0, let opened else { throw .cannotConnect(bus: which.description, errno: -result) }
        var unique: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(opened, &unique) >= 0, let unique else {
            sd_bus_flush_close_unref(opened)
            throw .cannotConnect(bus: which.description, errno: ENOTCONN)
        }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            sd_bus_flush_close_unref(opened)
            throw .failed(operation: "eventfd", errno: errno)
        }
        bus = opened
        wakeFD = wake
        uniqueName = String(cString: unique)
        loop = BusThreadState(onDisconnect: onDisconnect)
        try startThread()
    }

    private static func open(address: String, _ opened: inout OpaquePointer?) -> Int32 {
        var created: OpaquePointer?
        var result = sd_bus_new(&created)
        guard result >= 0, let created else { return result }
        result = sd_bus_set_address(created, address)
        if result >= 0 { result = sd_bus_set_bus_client(created, 1) }
        // Unix fd passing (`h`): sd-bus asks for it by default; said here since BlueZ's
        // Profile1.NewConnection depends on it. sd_bus_open_user/system do the same.
        if result >= 0 { result = sd_bus_negotiate_fds(created, 1) }
        if result >= 0 { result = sd_bus_start(created) }
        guard result >= 0 else {
            sd_bus_unref(created)
            return result
        }
        opened = created
        return result
    }

    /// Stops the bus thread, fails calls still waiting, flushes and frees the bus. Idempotent;
    /// must not be called from a handler (the bus thread would wait for itself).
    public func close() {
        let wasClosed = queue.withLock { queue in
            defer { queue.isClosed = true }
            return queue.isClosed
        }
        guard !wasClosed else { return }
        if let thread {
            precondition(pthread_equal(thread, pthread_self()) == 0, "DBusConnection.close() called from one of its own handlers")
            wake()
            pthread_join(thread, nil)
        }
        // The thread has ended: this is now the bus thread. Work queued before the close runs
        // against a closed state (calls fail, replies and signals are flushed out).
        loop.close()
        for item in queue.withLock({ $0.takeAll() }) { item(bus) }
        sd_bus_flush_close_unref(bus)
        Glibc.close(wakeFD)
    }

    // MARK: - Work on the bus thread

    /// Runs `work` on the bus thread soon; false (and `work` dropped) once the connection is
    /// closing, so a caller waiting on it can fail instead.
    @discardableResult
    func perform(_ work: @escaping @Sendable (OpaquePointer) -> Void) -> Bool {
        let queued = queue.withLock { queue in
            guard !queue.isClosed else { return false }
            queue.items.append(work)
            return true
        }
        if queued { wake() }
        return queued
    }

    /// Runs `work` on the bus thread and returns what it returned.
    func onBusThread<T: Sendable>(_ work: @escaping @Sendable (OpaquePointer) throws(DBusError) -> T) async throws(DBusError) -> T {
        let result: Result<T, DBusError> = await withCheckedContinuation { continuation in
            let queued = perform { [loop] bus in
                guard !loop.isDisconnected else {
                    continuation.resume(returning: .failure(.disconnected))
                    return
                }
                do throws(DBusError) { continuation.resume(returning: .success(try work(bus))) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if !queued { continuation.resume(returning: .failure(.disconnected)) }
        }
        return try result.get()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    private func startThread() throws(DBusError) {
        let context = Unmanaged.passRetained(self)
        var created = pthread_t()
        let result = pthread_create(&created, nil, { raw in
            let connection = Unmanaged<DBusConnection>.fromOpaque(raw!).takeRetainedValue()
            connection.runLoop()
            return nil
        }, context.toOpaque())
        guard result == 0 else {
            context.release()
            throw .failed(operation: "starting the bus thread", errno: result)
        }
        thread = created
    }

    /// The bus thread: run queued work, let sd-bus dispatch, then sleep in `poll` until the
    /// bus fd, a wake-up or sd-bus's own timeout (a method call's deadline).
    private func runLoop() {
        while let work = queue.withLock({ $0.isClosed ? nil : $0.takeAll() }) {
            for item in work { item(bus) }
            var processed: Int32
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0
            if processed < 0 {
                loop.disconnect()
                drainAfterDisconnect()
                return
            }
            waitForActivity()
        }
    }

    private func waitForActivity() {
        var timeoutUsec: UInt64 = .max
        _ = sd_bus_get_timeout(bus, &timeoutUsec)
        var timeoutMs: Int32 = -1
        if timeoutUsec != .max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            timeoutMs = timeoutUsec <= nowUsec ? 0 : Int32(min((timeoutUsec - nowUsec + 999) / 1000, UInt64(Int32.max)))
        }
        var fds = [
            pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&fds, 2, timeoutMs)
        if fds[1].revents != 0 {
            var counter: UInt64 = 0
            _ = read(wakeFD, &counter, MemoryLayout<UInt64>.size)
        }
    }

    /// After the bus broke: keep answering queued work (each sees `isDisconnected`) until closed.
    private func drainAfterDisconnect() {
        while let work = queue.withLock({ $0.isClosed ? nil : $0.takeAll() }) {
            for item in work { item(bus) }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, -1)
            var counter: UInt64 = 0
            _ = read(wakeFD, &counter, MemoryLayout<UInt64>.size)
        }
    }

    var state: BusThreadState { loop }
}

/// Work handed to the bus thread, and whether the connection is closing.
private struct WorkQueue: ~Copyable {
    var items: [@Sendable (OpaquePointer) -> Void] = []
    var isClosed = false

    mutating func takeAll() -> [@Sendable (OpaquePointer) -> Void] {
        defer { items.removeAll(keepingCapacity: true) }
        return items
    }
}

/// What the bus thread keeps between callbacks: handler boxes and calls waiting for replies.
/// Touched on the bus thread, and by `close()` after that thread has ended.
final class BusThreadState: @unchecked Sendable {
    private let onDisconnect: (@Sendable () -> Void)?
    private(set) var isDisconnected = false
    /// Keeps handler boxes alive as long as the bus may call them (their slots are floating).
    var retainedHandlers: [AnyObject] = []
    /// Method calls waiting for their reply, by token: they own their `WaitingCall`, which
    /// sd-bus's callback only borrows.
    private var waitingCalls: [UInt: WaitingCall] = [:]
    private var nextToken: UInt = 1

    init(onDisconnect: (@Sendable () -> Void)?) { self.onDisconnect = onDisconnect }

    func disconnect() {
        guard !isDisconnected else { return }
        isDisconnected = true
        failAllCalls()
        onDisconnect?()
    }

    /// `close()`: as a disconnect, but the owner asked for it, so nobody is told.
    func close() {
        isDisconnected = true
        failAllCalls()
    }

    func failAllCalls() {
        for call in Array(waitingCalls.values) { call.complete(.failure(.disconnected)) }
    }

    func wait(_ completion: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) -> WaitingCall {
        let call = WaitingCall(token: nextToken, state: self, completion: completion)
        waitingCalls[nextToken] = call
        nextToken += 1
        return call
    }

    fileprivate func finished(_ token: UInt) { waitingCalls.removeValue(forKey: token) }
}

/// One method call waiting for its reply (bus thread only).
final class WaitingCall: @unchecked Sendable {
    private let token: UInt
    private unowned let state: BusThreadState
    private var completion: (@Sendable (Result<[DBusValue], DBusError>) -> Void)?

    init(token: UInt, state: BusThreadState, completion: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) {
        self.token = token
        self.state = state
        self.completion = completion
    }

    func complete(with reply: OpaquePointer) {
        if sd_bus_message_is_method_error(reply, nil) > 0, let error = sd_bus_message_get_error(reply) {
            let name = error.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            let message = error.pointee.message.map { String(cString: $0) } ?? ""
            complete(.failure(.remote(name: name, message: message)))
            return
        }
        do throws(DBusError) { complete(.success(try SDBusMessageCodec.readAll(reply))) } catch { complete(.failure(error)) }
    }

    func complete(_ result: Result<[DBusValue], DBusError>) {
        guard let completion else { return }
        self.completion = nil
        completion(result)
        state.finished(token)
    }
}

/// Borrowed by sd-bus as the userdata of an exported object.
final class MethodHandlerBox: @unchecked Sendable {
    private unowned let connection: DBusConnection
    private let handler: @Sendable (DBusMethodCall) -> Void

    init(connection: DBusConnection, handler: @escaping @Sendable (DBusMethodCall) -> Void) {
        self.connection = connection
        self.handler = handler
    }

    /// Reads the call whole and hands it on; 1 tells sd-bus it is taken care of.
    func handle(_ message: OpaquePointer) -> Int32 {
        let text = { (pointer: UnsafePointer<CChar>?) in pointer.map { String(cString: $0) } }
        let reply = DBusReply(connection: connection, call: message)
        guard let arguments = try? SDBusMessageCodec.readAll(message) else {
            reply.fail(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "the message body could not be read")
            return 1
        }
        handler(DBusMethodCall(
            path: text(sd_bus_message_get_path(message)) ?? "/",
            interface: text(sd_bus_message_get_interface(message)),
            member: text(sd_bus_message_get_member(message)) ?? "",
            sender: text(sd_bus_message_get_sender(message)),
            signature: text(sd_bus_message_get_signature(message, 1)) ?? "",
            arguments: arguments,
            reply: reply))
        return 1
    }
}

/// Borrowed by sd-bus as the userdata of a signal match.
final class SignalHandlerBox: @unchecked Sendable {
    private let handler: @Sendable (DBusSignal) -> Void

    init(handler: @escaping @Sendable (DBusSignal) -> Void) { self.handler = handler }

    func handle(_ message: OpaquePointer) {
        let text = { (pointer: UnsafePointer<CChar>?) in pointer.map { String(cString: $0) } }
        guard let arguments = try? SDBusMessageCodec.readAll(message) else { return }
        handler(DBusSignal(
            sender: text(sd_bus_message_get_sender(message)),
            path: text(sd_bus_message_get_path(message)) ?? "/",
            interface: text(sd_bus_message_get_interface(message)) ?? "",
            member: text(sd_bus_message_get_member(message)) ?? "",
            arguments: arguments))
    }
}

/// An sd-bus message pointer handed to the bus thread; only that thread dereferences it.
struct MessageReference: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
