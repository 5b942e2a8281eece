/// One named part of a score, Lucene-Explanation style: a value, the rule that produced it, and
/// the factors it is made of.
public struct ScoreTerm: Sendable, Hashable {
    public var name: String
    public var value: Int64
    /// The rule (design.md §2 point, or config file:line) and the facts that made it apply.
    public var why: String
    public var details: [ScoreTerm]

    public init(name: String, value: Int64, why: String, details: [ScoreTerm] = []) {
        self.name = name
        self.value = value
        self.why = why
        self.details = details
    }

}

/// A sink's whole score: the sum of its terms.
public struct ScoreExplanation: Sendable, Hashable {
    public var node: String
    public var total: Int64
    public var terms: [ScoreTerm]

    /// `total = name value + …`, the one-line form.
    public var sumText: String {
        let parts = terms.map { "\($0.name) \($0.value)" }
        return "\(total) = " + (parts.isEmpty ? "0" : parts.joined(separator: " + "))
    }

    /// An indented tree: the total, then each term with its reason and factors.
    public func treeText(indent: String = "") -> String {
        var lines = ["\(indent)\(total) = score of \(node), sum of:"]
        func add(_ term: ScoreTerm, _ depth: Int) {
            let pad = indent + String(repeating: "  ", count: depth)
            lines.append("\(pad)\(term.value) \(term.name): \(term.why)")
            for detail in term.details { add(detail, depth + 1) }
        }
        for term in terms { add(term, 1) }
        return lines.joined(separator: "\n")
    }
}
