/// Policy time: milliseconds on a clock the caller injects (a monotonic clock in the daemon,
/// the `at` of each event in `earshot eval`). The policy never reads a clock itself.
public typealias Milliseconds = Int64
