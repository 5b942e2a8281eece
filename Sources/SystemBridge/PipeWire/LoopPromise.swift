/// A one-shot result produced on the loop thread and awaited from Swift concurrency.
/// Every member is used with the loop lock held (callbacks hold it; the connection takes it).
final class LoopPromise<Value: Sendable>: @unchecked Sendable {
    private var result: Result<Value, PipeWireError>?
    private var continuation: CheckedContinuation<Value, any Error>?

    var isSettled: Bool { result != nil }

    func fulfill(_ value: Value) { settle(.success(value)) }
    func fail(_ error: PipeWireError) { settle(.failure(error)) }

    private func settle(_ outcome: Result<Value, PipeWireError>) {
        guard result == nil else { return }
        result = outcome
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        continuation = nil
    }

    /// Waits for the result; `loop` provides the lock that guards this promise. A daemon
    /// that never answers fails the wait after `timeout` instead of hanging the caller.
    func value(on loop: ThreadLoop, timeout: Duration = .seconds(10), what: String = "PipeWire") async throws(PipeWireError) -> Value {
        let deadline = Task { [self] in
            try await Task.sleep(for: timeout)  // the deadline; normally cancelled long before
            loop.withLock { fail(.timedOut(what)) }
        }
        defer { deadline.cancel() }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                loop.withLock {
                    if let result {
                        continuation.resume(with: result.mapError { $0 as any Error })
                    } else {
                        self.continuation = continuation
                    }
                }
            }
        } catch let error as PipeWireError {
            throw error
        } catch {
            throw PipeWireError.disconnected("\(error)")
        }
    }
}
