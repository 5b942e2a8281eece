import AudioGraph
import RoutingPolicy
/// Checks each event's `"expect"` against the decisions `EvalRunner` reports, in order. An
/// event has settled when the next event arrives (the runner has by then fired every timer due
/// up to and including that event's time) or when the run ends (every timer has fired); the
/// last decision before that point is the one checked.
public struct EvalExpectationChecker: Sendable {
    private var pending: EvalEvent?
    /// Kept as a Decision: a record is built only for a failure, so a script without
    /// expectations costs nothing extra.
    private var latest: (decision: Decision, line: Int?)?

    public init() {}

    /// Feed every decision as the runner reports it. Returns the failures of the previous
    /// event's expectations when this decision shows it has settled.
    public mutating func observe(_ decision: Decision, event: EvalEvent?) -> [ExpectationFailure] {
        let failures = event == nil ? [] : settle()
        latest = (decision, event?.line)
        if let event, !event.expectations.isEmpty { pending = event }
        return failures
    }

    /// After the run: the last event's expectations, its timers all fired.
    public mutating func finish() -> [ExpectationFailure] { settle() }

    private mutating func settle() -> [ExpectationFailure] {
        guard let event = pending, let latest else { return [] }
        pending = nil
        return event.expectations.filter { !$0.holds(in: latest.decision) }
            .map { ExpectationFailure(event: event, expectation: $0, decision: DecisionRecord(latest.decision, line: latest.line)) }
    }
}
