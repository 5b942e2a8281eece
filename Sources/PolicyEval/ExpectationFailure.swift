import RoutingPolicy
import AudioGraph
import FoundationEssentials

/// An `"expect"` that did not hold: which line asked what, and the settled decision it was
/// checked against. `--format json` prints it as `{"expectation-failed": {…}}` in the stream.
public struct ExpectationFailure: Codable, Sendable, Hashable {
    /// The event's script line and time.
    public var line: Int
    public var at: Milliseconds
    /// `{"default": NODE}`, `{"not-default": NODE}`, … or `{"stream-source": {"stream": ID,
    /// "source": NODE or null}}`: the one expectation that failed.
    public var expected: [String: JSONValue]
    /// The default once the event and its timers settled (null: no default).
    public var `default`: String?
    /// The decision that left that default: the event's own, or the last timer's it started.
    public var decision: DecisionRecord

    public init(event: EvalEvent, expectation: EvalExpectation, decision: DecisionRecord) {
        line = event.line
        at = event.at
        expected = [expectation.kind.rawValue: expectation.json]
        `default` = decision.default
        self.decision = decision
    }

    private enum CodingKeys: String, CodingKey {
        case line, at, expected, `default`, decision
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(line, forKey: .line)
        try container.encode(at, forKey: .at)
        try container.encode(expected, forKey: .expected)
        // Null rather than left out, as DecisionRecord writes absent values.
        try container.encode(`default`, forKey: .default)
        try container.encode(decision, forKey: .decision)
    }

    /// `{"expectation-failed": {…}}` on one line, keys sorted: tagged so a reader of the
    /// stream tells it from a decision object.
    public var jsonLine: String {
        struct Tagged: Encodable {
            var failure: ExpectationFailure
            enum CodingKeys: String, CodingKey { case failure = "expectation-failed" }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Tagged(failure: self)) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// `X`, or a stream-source's `#401 X` (`#401 the default source`).
    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .object(let fields):
            let source = if case .string(let name)? = fields["source"] { name } else { "the default source" }
            return (fields["stream"].map { "#" + $0.canonicalText + " " } ?? "") + source
        default: return value.canonicalText
        }
    }

    /// `✗ line 5 (5000 ms): expected default X; the default is Y (after 9400 ms off-grace …)`,
    /// then the decision's explanation, indented like eval's own rows.
    public func textLines(detail: DecisionText.Detail) -> [String] {
        let expectation = expected.sorted { $0.key < $1.key }.map { "\($0.key) " + Self.text($0.value) }.joined(separator: ", ")
        let indent = String(repeating: " ", count: 10)
        let actual: String
        if case .integer(let id)? = expected["stream-source"]?["stream"], let stream = ObjectID(exactly: id) {
            actual = "stream #\(id) records from " + (EvalExpectation.pointedSource(of: stream, in: decision.calls).map { "\($0) (pointed)" } ?? "the default source")
        } else if expected.keys.contains(where: { $0.hasSuffix("source") }) {
            actual = "the default source is \(decision.defaultSource ?? "(none)")"
        } else {
            actual = "the default is \(`default` ?? "(none)")"
        }
        let head = "✗ expectation failed, line \(line) (\(at) ms): expected \(expectation); "
            + "\(actual) (settled at \(decision.at) ms, \(decision.trigger))"
        // Node names are any client's: each line escaped (TerminalText).
        return ([head, indent + decision.summary] + DecisionText.explanationLines(decision, detail: detail).map { indent + $0 })
            .map { TerminalText.escape($0) }
    }
}
