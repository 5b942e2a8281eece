import RoutingPolicy
import AudioGraph

/// What an event line's `"expect"` asks of the default once that event and the timers it
/// starts have settled: `{"default": NODE}` or `{"not-default": NODE}`, and for the input
/// `{"default-source": NODE}` or `{"not-default-source": NODE}` (any of them may be given).
public struct EvalExpectation: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case isDefault = "default"
        case notDefault = "not-default"
        case isDefaultSource = "default-source"
        case notDefaultSource = "not-default-source"
    }

    public var kind: Kind
    /// A node.name.
    public var node: String

    public init(_ kind: Kind, _ node: String) {
        self.kind = kind
        self.node = node
    }

    public func holds(forDefault actual: String?) -> Bool { holds(sink: actual, source: nil) }

    /// Whether the decided default sink and source meet this expectation.
    public func holds(sink: String?, source: String?) -> Bool {
        switch kind {
        case .isDefault: sink == node
        case .notDefault: sink != node
        case .isDefaultSource: source == node
        case .notDefaultSource: source != node
        }
    }

    /// `default X` / `not-default X`: how the expectation reads in text output.
    public var description: String { "\(kind.rawValue) \(node)" }

    /// The `"expect"` object of a line, or the message to refuse the line with.
    static func parse(_ value: JSONValue) -> Result<[EvalExpectation], EvalExpectationSyntaxError> {
        let usage = "expect takes {\"default\": \"<node.name>\"}, {\"not-default\": \"<node.name>\"}, {\"default-source\": \"<node.name>\"} or {\"not-default-source\": \"<node.name>\"}"
        guard case .object(let fields) = value, !fields.isEmpty else { return .failure(.init(message: usage)) }
        var expectations: [EvalExpectation] = []
        // Sorted: the same line always reports the same first problem.
        for key in fields.keys.sorted() {
            guard let kind = Kind(rawValue: key) else {
                return .failure(.init(message: "expect: unknown key \"\(key)\"; \(usage)"))
            }
            guard case .string(let node)? = fields[key] else {
                return .failure(.init(message: "expect: \"\(key)\" must be a node.name string; \(usage)"))
            }
            expectations.append(EvalExpectation(kind, node))
        }
        return .success(expectations)
    }
}

/// Why an `"expect"` object was refused; `EvalScript` adds the file and line.
struct EvalExpectationSyntaxError: Error {
    var message: String
}
