import Synchronization

/// Pauses waiting for a player to report a status (its `PropertiesChanged`), each with a
/// deadline. Announced from the bus thread, waited for on the daemon's tasks; a waiter is
/// resumed exactly once: by the announcement, by its deadline, or by `cancel`.
final class StatusWaiters: Sendable {
    struct Token: Hashable, Sendable {
        fileprivate var number: UInt64
        fileprivate var connection: String
    }

    private struct Entry {
        var status: String
        /// Announced before anyone waited.
        var arrived = false
        var continuation: CheckedContinuation<Bool, Never>?
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [Token: Entry] = [:]
    }

    private let state = Mutex(State())

    /// Starts listening for `connection` reporting `status`.
    func expect(_ connection: String, status: String) -> Token {
        state.withLock { state in
            state.next += 1
            let token = Token(number: state.next, connection: connection)
            state.entries[token] = Entry(status: status)
            return token
        }
    }

    /// `connection` reported `status` (from the bus thread).
    func announce(_ connection: String, status: String) {
        let resumed = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            var resumed: [CheckedContinuation<Bool, Never>] = []
            for (token, entry) in state.entries where token.connection == connection && entry.status == status {
                if let continuation = entry.continuation {
                    resumed.append(continuation)
                    state.entries[token] = nil
                } else {
                    state.entries[token]?.arrived = true
                }
            }
            return resumed
        }
        for continuation in resumed { continuation.resume(returning: true) }
    }

    /// True once the status came, false when `bound` passed first.
    func wait(_ token: Token, within bound: Duration) async -> Bool {
        let deadline = Task {
            try? await Task.sleep(for: bound)  // the deadline, not a synchronisation
            self.finish(token, with: false)
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let early = state.withLock { state -> Bool? in
                guard let entry = state.entries[token] else { return false }
                if entry.arrived {
                    state.entries[token] = nil
                    return true
                }
                state.entries[token]?.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    /// Stops listening (the status was read directly, or Pause failed).
    func cancel(_ token: Token) { finish(token, with: false) }

    private func finish(_ token: Token, with result: Bool) {
        let continuation = state.withLock { state in state.entries.removeValue(forKey: token)?.continuation }
        continuation?.resume(returning: result)
    }
}
