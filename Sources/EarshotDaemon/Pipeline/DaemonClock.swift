import FoundationEssentials
import RoutingPolicy

/// The daemon's sense of time: the policy's clock (milliseconds since start), the wall clock
/// events carry, and sleeping until a policy deadline. Injected, so daemon tests control time
/// the way NIO's EmbeddedEventLoop does.
public protocol DaemonClock: Sendable {
    /// Milliseconds since the daemon started: the `at` of every policy input.
    var now: Milliseconds { get }
    /// Milliseconds since the Unix epoch, for events and the history.
    var wallClock: Int64 { get }
    /// Returns once `now` has reached `deadline`; throws when the task is cancelled.
    func sleep(until deadline: Milliseconds) async throws
}

/// Real time: a monotonic clock for the policy, the system clock for events.
public struct SystemDaemonClock: DaemonClock {
    private let started = ContinuousClock.now

    public init() {}

    public var now: Milliseconds {
        let elapsed = started.duration(to: .now)
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    public var wallClock: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    public func sleep(until deadline: Milliseconds) async throws {
        try await Task.sleep(until: started + .milliseconds(deadline), clock: .continuous)
    }
}
