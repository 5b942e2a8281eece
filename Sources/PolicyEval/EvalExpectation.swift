import RoutingPolicy
import AudioGraph

/// What an event line's `"expect"` asks of the default once that event and the timers it
/// starts have settled: `{"default": NODE}` or `{"not-default": NODE}`, and for the input
/// `{"default-source": NODE}` or `{"not-default-source": NODE}` (any of them may be given), and
/// of a capture stream `{"stream-source": {"stream": ID, "source": NODE or null}}` (§8 calls).
public struct EvalExpectation: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case isDefault = "default"
        case notDefault = "not-default"
        case isDefaultSource = "default-source"
        case notDefaultSource = "not-default-source"
        case streamSource = "stream-source"
    }

    /// `"source": null` (or `"default"`) of a `stream-source`: the stream records from the
    /// default source, pointed nowhere by Earshot.
    public static let defaultSource = "default"

    public var kind: Kind
    /// A node.name; for `stream-source`, the source's (or `defaultSource`).
    public var node: String
    /// The capture stream's node id of a `stream-source`.
    public var stream: ObjectID?

    public init(_ kind: Kind, _ node: String, stream: ObjectID? = nil) {
        self.kind = kind
        self.node = node
        self.stream = stream
    }

    public func holds(forDefault actual: String?) -> Bool { holds(sink: actual, source: nil) }

    /// Whether the decided default sink and source meet this expectation (a `stream-source`
    /// asks the decision's calls, `holds(in:)`; without them no stream is pointed).
    public func holds(sink: String?, source: String?) -> Bool {
        switch kind {
        case .isDefault: sink == node
        case .notDefault: sink != node
        case .isDefaultSource: source == node
        case .notDefaultSource: source != node
        case .streamSource: node == Self.defaultSource
        }
    }

    public func holds(in decision: Decision) -> Bool {
        guard kind == .streamSource else { return holds(sink: decision.defaultSink, source: decision.defaultSource) }
        return (Self.pointedSource(of: stream, in: decision.calls) ?? Self.defaultSource) == node
    }

    /// The source Earshot points `stream` at (§8 calls), nil when it records from the default.
    static func pointedSource(of stream: ObjectID?, in calls: CallRoutingOutcome?) -> String? {
        calls?.streams.first { $0.stream == stream }?.source
    }

    /// `default X` / `not-default X` / `stream-source #401 X`: how the expectation reads in
    /// text output.
    public var description: String { "\(kind.rawValue) " + (stream.map { "#\($0) " } ?? "") + node }

    /// The expectation as the line gave it, for a failure's `expected`.
    var json: JSONValue {
        guard kind == .streamSource else { return .string(node) }
        return .object(["stream": .integer(Int64(stream ?? 0)), "source": node == Self.defaultSource ? .null : .string(node)])
    }

    /// The `"expect"` object of a line, or the message to refuse the line with.
    static func parse(_ value: JSONValue) -> Result<[EvalExpectation], EvalExpectationSyntaxError> {
        let usage = "expect takes {\"default\": \"<node.name>\"}, {\"not-default\": \"<node.name>\"}, {\"default-source\": \"<node.name>\"}, {\"not-default-source\": \"<node.name>\"} or {\"stream-source\": {\"stream\": <node id>, \"source\": \"<node.name>\" or null}}"
        guard case .object(let fields) = value, !fields.isEmpty else { return .failure(.init(message: usage)) }
        var expectations: [EvalExpectation] = []
        // Sorted: the same line always reports the same first problem.
        for key in fields.keys.sorted() {
            guard let kind = Kind(rawValue: key) else {
                return .failure(.init(message: "expect: unknown key \"\(key)\"; \(usage)"))
            }
            if kind == .streamSource {
                guard let expectation = streamSource(fields[key] ?? .null) else {
                    return .failure(.init(message: "expect: \"stream-source\" must be {\"stream\": <node id>, \"source\": \"<node.name>\" or null}; \(usage)"))
                }
                expectations.append(expectation)
                continue
            }
            guard case .string(let node)? = fields[key] else {
                return .failure(.init(message: "expect: \"\(key)\" must be a node.name string; \(usage)"))
            }
            expectations.append(EvalExpectation(kind, node))
        }
        return .success(expectations)
    }

    /// `{"stream": 401, "source": "bluez_input.X"}`; `"source"` null or `"default"`: the
    /// default source.
    private static func streamSource(_ value: JSONValue) -> EvalExpectation? {
        guard case .object(let fields) = value, Set(fields.keys) == ["stream", "source"],
            case .integer(let id)? = fields["stream"], let stream = ObjectID(exactly: id)
        else { return nil }
        switch fields["source"] {
        case .string(let source)?: return EvalExpectation(.streamSource, source, stream: stream)
        case .null?: return EvalExpectation(.streamSource, defaultSource, stream: stream)
        default: return nil
        }
    }
}

/// Why an `"expect"` object was refused; `EvalScript` adds the file and line.
struct EvalExpectationSyntaxError: Error {
    var message: String
}
