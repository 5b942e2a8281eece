/// The text form of `earshot eval`: one table row per decision, then its explanation.
public enum DecisionText {
    public enum Detail: String, Sendable, CaseIterable {
        /// The summary and the winner's score as a sum of terms.
        case summary
        /// Every eligible sink's score as a tree, and every rejected sink with its reason.
        case full
    }

    public static let header = pad("AT ms", 8, right: true) + "  " + pad("TRIGGER", 34) + "  " + pad("DEFAULT", 48) + "  REASON"

    public static func render(_ decision: Decision, detail: Detail) -> String {
        let mark = decision.changed ? "→ " : "= "
        var lines = [
            pad("\(decision.at)", 8, right: true) + "  " + pad(decision.trigger.description, 34) + "  "
                + pad(mark + (decision.defaultSink ?? "(none)"), 48) + "  " + (decision.reason?.rawValue ?? "-"),
        ]
        let indent = String(repeating: " ", count: 10)
        if let error = decision.error {
            lines.append(indent + "refused: \(error.code.rawValue): \(error.message)")
        }
        lines.append(indent + decision.summary)
        switch detail {
        case .summary:
            if let winner = decision.ranking.first {
                lines.append(indent + "winner: " + decision.explanation(of: winner).sumText)
            }
        case .full:
            for (place, sink) in decision.ranking.enumerated() {
                lines.append(indent + "#\(place + 1) " + decision.explanation(of: sink).treeText(indent: indent).dropFirst(indent.count))
            }
            for sink in decision.rejected {
                lines.append(indent + "✗ \(sink.node): \(decision.why(sink))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text }
        let space = String(repeating: " ", count: width - text.count)
        return right ? space + text : text + space
    }
}
