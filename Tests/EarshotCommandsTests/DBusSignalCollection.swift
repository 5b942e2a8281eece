import PipeWireTestSupport
import SystemBridge

extension AsyncStream<DBusSignal> {
    /// The signals up to and including the first that `last` accepts, within `timeout`. May be
    /// called again on the same stream for the signals after those.
    func collect(timeout: Duration, until last: @escaping @Sendable (DBusSignal) -> Bool) async throws -> [DBusSignal] {
        try await withThrowingTaskGroup(of: [DBusSignal].self) { group in
            group.addTask {
                var seen: [DBusSignal] = []
                for await signal in self {
                    seen.append(signal)
                    if last(signal) { return seen }
                }
                throw FixtureError("the signal stream ended after \(seen.map(\.member))")
            }
            group.addTask {
                try await Task.sleep(for: timeout)  // the deadline, raced against the signals
                throw FixtureError("no matching signal within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
