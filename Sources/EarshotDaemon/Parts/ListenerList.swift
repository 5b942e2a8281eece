import Synchronization

/// Who is told when something happens, in the order they came: the one way the daemon's parts
/// keep listeners (the first graph, each config taken, event subscribers, live recordings).
/// Each listener is kept under a token, so one whose stream ends can be taken out; at most
/// `capacity` at once, and none once the list is closed (the daemon stops).
struct ListenerList<Listener> {
    let capacity: Int
    private var entries: [(token: UInt64, listener: Listener)] = []
    private var lastToken: UInt64 = 0
    private(set) var isClosed = false

    init(capacity: Int = .max) {
        self.capacity = capacity
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var listeners: [Listener] { entries.map(\.listener) }

    /// Adds `listener`; returns its token, or nil when the list is full or closed.
    mutating func add(_ listener: Listener) -> UInt64? {
        guard !isClosed, entries.count < capacity else { return nil }
        lastToken += 1
        entries.append((lastToken, listener))
        return lastToken
    }

    mutating func remove(_ token: UInt64) {
        entries.removeAll { $0.token == token }
    }

    /// Takes every listener out, leaving the list open (a one-time signal told them).
    mutating func removeAll() -> [Listener] {
        defer { entries = [] }
        return listeners
    }

    /// Takes every listener out and takes no more.
    mutating func close() -> [Listener] {
        isClosed = true
        return removeAll()
    }
}

extension ListenerList: Sendable where Listener: Sendable {}

/// Listeners told once, when something first happens; one added after that is told at once
/// (on its own task), one past the capacity never.
struct OnceListeners {
    private var waiting: ListenerList<@Sendable () async -> Void>
    private(set) var happened = false

    init(capacity: Int) {
        waiting = ListenerList(capacity: capacity)
    }

    mutating func add(_ handler: @escaping @Sendable () async -> Void) {
        if happened {
            Task { await handler() }
        } else {
            _ = waiting.add(handler)
        }
    }

    /// It happened: every listener waiting is told, each on its own task. Only the first call tells.
    mutating func happen() {
        guard !happened else { return }
        happened = true
        for handler in waiting.close() { Task { await handler() } }
    }
}

/// Subscribers each reading a stream of their own, kept in one listener list behind a lock
/// (a stream ends on any thread): one whose buffer is full is cut off (its stream finished),
/// and one whose stream ended is taken out.
final class StreamListeners<Element: Sendable>: Sendable {
    private let list: Mutex<ListenerList<AsyncStream<Element>.Continuation>>

    init(capacity: Int = .max) {
        list = Mutex(ListenerList(capacity: capacity))
    }

    var count: Int { list.withLock { $0.count } }
    var isEmpty: Bool { list.withLock { $0.isEmpty } }

    /// A new subscriber's stream: finished at once when the list is full or closed.
    func subscribe(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        guard let token = list.withLock({ $0.add(continuation) }) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.list.withLock { $0.remove(token) }
        }
        return stream
    }

    func yield(_ element: Element) {
        // Yielded outside the lock: a stream's termination handler takes it.
        for subscriber in list.withLock({ $0.listeners }) {
            if case .dropped = subscriber.yield(element) { subscriber.finish() }
        }
    }

    /// Ends every stream and takes no more (the daemon stops).
    func close() {
        for subscriber in list.withLock({ $0.close() }) { subscriber.finish() }
    }
}
