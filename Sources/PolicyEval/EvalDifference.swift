import AudioGraph
import RoutingPolicy
import FoundationEssentials

/// One place where two configs decide differently over the same graph and script: what
/// `earshot eval --against` prints, one JSON object per difference.
public struct EvalDifference: Codable, Sendable, Hashable {
    /// One run's side of the difference.
    public struct Side: Codable, Sendable, Hashable {
        /// False when this run made no decision here (a timer fired only in the other run):
        /// the fields then describe the decision it still stood by.
        public var decided: Bool
        public var `default`: String?
        public var reason: String?
        /// The tier that put this run's default above the other run's (its `runner-up`), or,
        /// when that sink is not eligible in this run, above its own runner-up (null with
        /// fewer than two eligible sinks).
        public var decidedBy: DecisionRecord.Decider?
        /// The winner's tier values, in tier order (null with no eligible sink).
        public var winner: DecisionRecord.Ranked?

        init(decided: Bool, default: String?, reason: String?, decidedBy: DecisionRecord.Decider?, winner: DecisionRecord.Ranked?) {
            self.decided = decided
            self.default = `default`
            self.reason = reason
            self.decidedBy = decidedBy
            self.winner = winner
        }

        init(_ record: DecisionRecord, decided: Bool) {
            self.decided = decided
            `default` = record.default
            reason = record.reason
            decidedBy = record.decidedBy
            winner = record.ranking.first
        }

        private enum CodingKeys: String, CodingKey {
            case decided, `default`, reason, decidedBy = "decided-by", winner
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(decided, forKey: .decided)
            try container.encode(`default`, forKey: .default)
            try container.encode(reason, forKey: .reason)
            try container.encode(decidedBy, forKey: .decidedBy)
            try container.encode(winner, forKey: .winner)
        }
    }

    public var at: Milliseconds
    /// The event's script line; null for the initial decision and timers.
    public var line: Int?
    public var trigger: String
    public var old: Side
    public var new: Side
    /// Which default differs: `output` (the sink; `default` names sinks), `input` (the
    /// source, §8; `default` names sources) or `calls` (where calls record from, §8; `default`
    /// names that Bluetooth microphone, null: the default source) or `playback` (what a departing
    /// headset pauses and holds, §7; `default` is `pause #81 (ancestor) · hold #82`).
    public var direction: Subject = .output

    public enum Subject: String, Sendable, Hashable, Codable {
        case output, input, calls, playback
    }

    init(at: Milliseconds, line: Int?, trigger: String, old: Side, new: Side) {
        self.at = at
        self.line = line
        self.trigger = trigger
        self.old = old
        self.new = new
    }

    private enum CodingKeys: String, CodingKey {
        case at, line, trigger, old, new, direction
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(at, forKey: .at)
        try container.encode(line, forKey: .line)
        try container.encode(trigger, forKey: .trigger)
        try container.encode(old, forKey: .old)
        try container.encode(new, forKey: .new)
        try container.encode(direction, forKey: .direction)
    }

    /// One line of JSON, keys sorted.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
