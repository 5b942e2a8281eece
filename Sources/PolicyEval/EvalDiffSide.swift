import AudioGraph
import RoutingPolicy

extension EvalDifference.Side {
    /// One run's side, explained against the other run's default: the tier that put this
    /// run's winner above the sink the other run chose is the term that made the difference.
    /// When that sink is not eligible in this run, the usual winner-over-runner-up tier.
    init(_ step: EvalDiff.Step, decided: Bool, otherDefault: String?) {
        var record = DecisionRecord(step.decision, line: step.line)
        let decision = step.decision
        if let winner = decision.ranking.first, let other = decision.ranking.first(where: { $0.node == otherDefault }), other.node != winner.node {
            record.decidedBy = DecisionRecord.decider(in: decision, winner: winner, over: other)
        }
        self.init(record, decided: decided)
    }

    /// The input side of one run (§8), explained against the other run's default source.
    init(input step: EvalDiff.Step, decided: Bool, otherDefault: String?) {
        let decision = step.decision
        let record = DecisionRecord(decision, line: step.line).input
        var decidedBy = record?.decidedBy
        if let ranking = decision.input?.ranking, let winner = ranking.first, let other = ranking.first(where: { $0.node == otherDefault }),
            other.node != winner.node
        {
            decidedBy = DecisionRecord.decider(in: decision, on: .input, winner: winner, over: other)
        }
        self.init(decided: decided, default: record?.default, reason: record?.reason, decidedBy: decidedBy, winner: record?.ranking.first)
    }
}
