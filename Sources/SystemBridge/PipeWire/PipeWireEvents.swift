/// A connection's events, in order, in batches: everything that arrived since the consumer
/// last looked. A switch makes a burst of registry and info events; taking them together
/// costs the consumer one wake-up and lets it decide once for the state after the burst.
/// One consumer; the sequence ends after `.disconnected` or `close()`.
public struct PipeWireEvents: AsyncSequence, Sendable {
    public typealias Element = [PipeWireEvent]
    let queue: EventQueue

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue, wakeups: queue.wakeups.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: EventQueue
        var wakeups: AsyncStream<Void>.AsyncIterator

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> [PipeWireEvent]? {
            while true {
                let batch = queue.take()
                if !batch.isEmpty { return batch }
                // A wake-up may be left over from a batch already taken: then look again.
                guard await wakeups.next(isolation: actor) != nil else {
                    let rest = queue.take()
                    return rest.isEmpty ? nil : rest
                }
            }
        }

        public mutating func next() async -> [PipeWireEvent]? { await next(isolation: nil) }
    }
}

/// The events between the loop thread and the consumer, guarded by the loop lock. The loop
/// thread wakes the consumer only when the queue goes from empty to not empty.
final class EventQueue: @unchecked Sendable {
    let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let loop: ThreadLoop
    private var pending: [PipeWireEvent] = []
    /// Nobody reads this connection's events (a metadata provider's): drop them, unqueued.
    var discards = false

    init(loop: ThreadLoop) {
        self.loop = loop
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Loop lock held.
    func append(_ event: PipeWireEvent) {
        loop.assertLockHeld()
        guard !discards else { return }
        pending.append(event)
        if pending.count == 1 { wake.yield() }
    }

    /// Loop lock held. Events appended before are still taken; nothing after.
    func finish() {
        loop.assertLockHeld()
        wake.finish()
    }

    /// Everything pending, oldest first.
    func take() -> [PipeWireEvent] {
        loop.withLock {
            guard !pending.isEmpty else { return [] }
            defer { pending.removeAll(keepingCapacity: false) }
            return pending
        }
    }
}
