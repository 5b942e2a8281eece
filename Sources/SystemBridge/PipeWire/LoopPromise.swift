/// A one-shot result produced on the loop thread and awaited from Swift concurrency.
/// Every member is used with the loop lock held (callbacks hold it; the connection takes it).
final class LoopPromise<Value: Sendable>: @unchecked Sendable {
    private var result: Result<Value, PipeWireError>?
    private var continuation: CheckedContinuation<Value, any Error>?
    /// Cancels the waiter's deadline.
    private var onSettle: (() -> Void)?
    /// Run on the loop thread when the result comes (true: fulfilled).
    private var observers: [(Bool) -> Void] = []

    var isSettled: Bool { result != nil }

    func fulfill(_ value: Value) { settle(.success(value)) }
    func fail(_ error: PipeWireError) { settle(.failure(error)) }

    private func settle(_ outcome: Result<Value, PipeWireError>) {
        guard result == nil else { return }
        result = outcome
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        continuation = nil
        onSettle?()
        onSettle = nil
        let observers = self.observers
        self.observers = []
        for observer in observers { observer(outcome.isSuccess) }
    }

    /// Calls `body` with the loop lock held as soon as the result is in (at once if it is):
    /// lets the loop thread act on it without a hop through Swift concurrency.
    func whenSettled(_ body: @escaping (Bool) -> Void) {
        if let result {
            body(result.isSuccess)
        } else {
            observers.append(body)
        }
    }

    /// Waits for the result; `loop` provides the lock that guards this promise. A daemon
    /// that never answers fails the wait after `timeout` instead of hanging the caller: the
    /// deadline is a timer on the loop itself, cancelled as soon as the result comes.
    func value(on loop: ThreadLoop, timeout: Duration = .seconds(10), what: String = "PipeWire") async throws(PipeWireError) -> Value {
        // Settled already (the usual case for all but the first of a batch): no deadline.
        if let result = loop.withLock({ result }) { return try result.get() }
        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000)
        do {
            return try await withCheckedThrowingContinuation { continuation in
                loop.withLock {
                    if let result {
                        continuation.resume(with: result.mapError { $0 as any Error })
                        return
                    }
                    self.continuation = continuation
                    let deadline = loop.deadlines.add(at: LoopDeadlines.now() + nanoseconds) { [self] in fail(.timedOut(what)) }
                    onSettle = { loop.deadlines.cancel(deadline) }
                }
            }
        } catch let error as PipeWireError {
            throw error
        } catch {
            throw PipeWireError.disconnected("\(error)")
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
