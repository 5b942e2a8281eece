import AudioGraph
import RoutingPolicy
/// An input at a time, as a script of events gives it.
public struct TimedInput: Sendable {
    public var at: Milliseconds
    public var input: PolicyInput
    /// The script line it came from, if any.
    public var line: Int?

    public init(at: Milliseconds, _ input: PolicyInput, line: Int? = nil) {
        self.at = at
        self.input = input
        self.line = line
    }
}

/// Drives an engine through timed inputs the way the daemon's loop will: the initial decision,
/// then before each input every timer due by its time fires (each at its deadline, one decision
/// each), and after the last input time runs on until no timer is pending.
public enum PolicyRun {
    public static func run(
        _ engine: inout PolicyEngine, inputs: some Sequence<TimedInput>, startAt start: Milliseconds = 0,
        onDecision: (Decision, TimedInput?) -> Void
    ) {
        onDecision(engine.handle(.start, at: start).decision, nil)
        for timed in inputs {
            fireTimers(&engine, upTo: timed.at, onDecision: onDecision)
            onDecision(engine.handle(timed.input, at: timed.at).decision, timed)
        }
        fireTimers(&engine, upTo: .max, onDecision: onDecision)
    }

    public static func fireTimers(_ engine: inout PolicyEngine, upTo limit: Milliseconds, onDecision: (Decision, TimedInput?) -> Void) {
        while let due = engine.nextDeadline, due <= limit {
            onDecision(engine.handle(.timerFired, at: due).decision, nil)
        }
    }

    /// Every decision of a run, for tests and small scripts.
    public static func decisions(_ engine: inout PolicyEngine, inputs: [TimedInput], startAt start: Milliseconds = 0) -> [Decision] {
        var result: [Decision] = []
        run(&engine, inputs: inputs, startAt: start) { decision, _ in result.append(decision) }
        return result
    }
}
