extension DecisionRecord {
    /// A record with only what `--explain summary` prints: the winner's tier values and the
    /// deciding tier. Explaining every sink (and every rejection) of a 50-sink graph for every
    /// decision was most of the time of a text replay, and the summary never showed it.
    init(summaryOf decision: Decision, input: Bool = true) {
        self.init(decision, line: nil, explaining: decision.ranking.prefix(1), rejected: [], input: input)
    }
}
