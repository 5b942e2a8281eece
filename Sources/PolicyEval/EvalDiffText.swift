import RoutingPolicy
import AudioGraph

/// `earshot eval --against` as text: an aligned table, a row per difference with the tier
/// that decided in each run, and under it each run's full "decided by" line.
public enum EvalDiffText {
    public static func render(_ differences: [EvalDifference]) -> [String] {
        guard !differences.isEmpty else { return [] }
        let header = ["AT ms", "LINE", "TRIGGER", "OLD → NEW", "DECIDED BY (OLD → NEW)"]
        let rows = differences.map { difference in
            [
                "\(difference.at)", difference.line.map(String.init) ?? "-", difference.trigger,
                prefix[difference.direction, default: ""] + name(difference.old, difference.direction) + " → " + name(difference.new, difference.direction),
                difference.direction == .calls || difference.direction == .playback ? "-" : tier(difference.old) + " → " + tier(difference.new),
            ]
        }
        // Columns as wide as their widest cell; the last is left ragged.
        let widths = (0..<header.count - 1).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (column, cell) in cells.enumerated() {
                if column == cells.count - 1 { text += cell; break }
                let space = String(repeating: " ", count: widths[column] - cell.count)
                // Numbers right-aligned, as eval's own table prints its times.
                text += (column < 2 ? space + cell : cell + space) + "  "
            }
            return text
        }
        let indent = String(repeating: " ", count: widths[0] + 2)
        var lines = [line(header)]
        for (difference, row) in zip(differences, rows) {
            lines.append(line(row))
            // Calls have no ranking of their own: the row says it all.
            if difference.direction == .calls || difference.direction == .playback { continue }
            lines.append(indent + "old: " + why(difference.old))
            lines.append(indent + "new: " + why(difference.new))
        }
        // Node names are any client's: each line escaped (TerminalText).
        return lines.map { TerminalText.escape($0) }
    }

    private static let prefix: [EvalDifference.Subject: String] = [.input: "mic · ", .calls: "calls · ", .playback: "playback · "]

    /// A side's default; calls without a microphone of their own record from the default source.
    private static func name(_ side: EvalDifference.Side, _ subject: EvalDifference.Subject) -> String {
        side.default ?? (subject == .calls ? "default source" : "(none)")
    }

    private static func tier(_ side: EvalDifference.Side) -> String {
        let tier = side.decidedBy?.tier ?? (side.winner == nil ? "no sink" : "only sink")
        return side.decided ? tier : "\(tier) (no timer here)"
    }

    /// The deciding tier's line and the winner's tier values: the terms that made it win.
    private static func why(_ side: EvalDifference.Side) -> String {
        let standing = side.decided ? "" : "no decision here, still "
        let winner = side.winner.map(DecisionText.sinkLine) ?? "no eligible sink"
        guard let decider = side.decidedBy else { return standing + winner }
        return standing + DecisionText.deciderLine(decider) + " — " + winner
    }
}
