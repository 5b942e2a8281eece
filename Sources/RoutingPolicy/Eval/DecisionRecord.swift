import Foundation

/// A decision as one JSON object: what `earshot eval --format json` prints per line (and what
/// `earshot watch` can reuse). Absent values are written as null, never left out.
public struct DecisionRecord: Encodable, Sendable, Hashable {
    public struct Term: Encodable, Sendable, Hashable {
        public var name: String
        public var value: Int64
        public var why: String
    }
    public struct Ranked: Encodable, Sendable, Hashable {
        public var node: String
        public var score: Int64
        public var terms: [Term]
    }
    public struct Rejected: Encodable, Sendable, Hashable {
        public var node: String
        public var why: String
    }
    public struct Failure: Encodable, Sendable, Hashable {
        public var code: String
        public var message: String
    }

    public var at: Milliseconds
    public var line: Int?
    public var trigger: String
    public var `default`: String?
    public var previous: String?
    public var changed: Bool
    public var reason: String?
    public var summary: String
    public var ranking: [Ranked]
    public var rejected: [Rejected]
    public var error: Failure?

    public init(_ decision: Decision, line: Int? = nil) {
        at = decision.at
        self.line = line
        trigger = decision.trigger.description
        `default` = decision.defaultSink
        previous = decision.previous
        changed = decision.changed
        reason = decision.reason?.rawValue
        summary = decision.summary
        ranking = decision.ranking.map { sink in
            let explanation = decision.explanation(of: sink)
            return Ranked(node: sink.node, score: sink.total, terms: explanation.terms.map { Term(name: $0.name, value: $0.value, why: $0.why) })
        }
        rejected = decision.rejected.map { Rejected(node: $0.node, why: decision.why($0)) }
        error = decision.error.map { Failure(code: $0.code.rawValue, message: $0.message) }
    }

    private enum CodingKeys: String, CodingKey {
        case at, line, trigger, `default`, previous, changed, reason, summary, ranking, rejected, error
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(at, forKey: .at)
        try container.encode(line, forKey: .line)
        try container.encode(trigger, forKey: .trigger)
        try container.encode(`default`, forKey: .default)
        try container.encode(previous, forKey: .previous)
        try container.encode(changed, forKey: .changed)
        try container.encode(reason, forKey: .reason)
        try container.encode(summary, forKey: .summary)
        try container.encode(ranking, forKey: .ranking)
        try container.encode(rejected, forKey: .rejected)
        try container.encode(error, forKey: .error)
    }

    /// One line of JSON, keys sorted so runs diff cleanly.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
