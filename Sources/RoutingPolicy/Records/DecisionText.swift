import AudioGraph

/// Decisions as text: the table rows of `earshot eval`, and the explanation lines that eval,
/// the daemon's verbose log and `earshot status --explain` all print. The one place a rank is
/// turned into a line.
public enum DecisionText {
    public enum Detail: String, Sendable, CaseIterable {
        /// The summary, the winner's tier values and the tier that decided.
        case summary
        /// Every eligible sink's tier values with the rule behind each, the tier that decided,
        /// and every rejected sink with its reason.
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
        for node in decision.flapping {
            lines.append(indent + node.sentence)
        }
        // The input only where the graph has sources to speak of (or it just lost them): its
        // record is not built otherwise.
        let showsInput = decision.input.map { $0.hasCandidates || ($0.changed && decision.trigger != .initial) } ?? false
        let record = detail == .summary
            ? DecisionRecord(summaryOf: decision, input: showsInput) : DecisionRecord(decision, line: nil, explaining: decision.ranking[...], rejected: decision.rejected, input: showsInput)
        lines += explanationLines(record, detail: detail).map { indent + $0 }
        if showsInput, let input = record.input {
            lines += inputLines(input, detail: detail).map { indent + $0 }
        }
        if let calls = decision.calls { lines += callsLines(calls).map { indent + $0 } }
        if let playback = decision.playback { lines += playbackLines(playback).map { indent + $0 } }
        // Node names and port labels are any client's: each line escaped (TerminalText).
        return TerminalText.lines(lines)
    }

    /// The explanation of a decision: with `.summary` the winner's line and the deciding tier;
    /// with `.full` a line per sink, each tier's rule under it, the deciding tier and every
    /// rejection.
    public static func explanationLines(_ record: DecisionRecord, detail: Detail) -> [String] {
        explanationLines(ranking: record.ranking, decidedBy: record.decidedBy, rejected: record.rejected, detail: detail)
    }

    public static func explanationLines(
        ranking: [DecisionRecord.Ranked], decidedBy: DecisionRecord.Decider?, rejected: [DecisionRecord.Rejected], detail: Detail
    ) -> [String] {
        var lines: [String] = []
        switch detail {
        case .summary:
            if let winner = ranking.first { lines.append("winner: " + sinkLine(winner)) }
            if let decider = decidedBy { lines.append(deciderLine(decider)) }
        case .full:
            for (place, sink) in ranking.enumerated() {
                lines.append("#\(place + 1) " + sinkLine(sink))
                for term in sink.tiers { lines.append("    \(term.tier): \(term.why)") }
            }
            if let decider = decidedBy { lines.append(deciderLine(decider)) }
            for sink in rejected { lines.append("✗ \(sink.node): \(sink.why)") }
        }
        return lines
    }

    /// The input side (§8): `input → bluez_input.X (placement-changed)` (`=` when it stays),
    /// its summary, and its explanation as `explanationLines` gives the output's.
    public static func inputLines(_ input: DecisionRecord.InputRecord, detail: Detail) -> [String] {
        var lines = ["input " + (input.changed ? "→ " : "= ") + (input.default ?? "(none)") + (input.reason.map { " (\($0))" } ?? "")]
        lines.append("  " + input.summary)
        lines += explanationLines(ranking: input.ranking, decidedBy: input.decidedBy, rejected: input.rejected, detail: detail).map { "  " + $0 }
        return lines
    }

    /// Calls (§8): `calls → bluez_input.X (keeps A2DP: calls only); 2 pointed: #401 Some
    /// Softphone (media.role = Communication), …`, then a line per stream this decision moved.
    /// Nothing when calls are not routed and nothing is pointed.
    public static func callsLines(_ calls: CallRoutingOutcome) -> [String] {
        guard !calls.isEmpty else { return [] }
        var head = "calls → " + (calls.source.map { "\($0) (keeps A2DP: calls only)" } ?? "default source")
        head += calls.streams.isEmpty ? "; none pointed"
            : "; \(calls.streams.count) pointed: " + calls.streams.map { "\(streamName($0.stream, $0.application, $0.role)) (\($0.why))" }.joined(separator: ", ")
        return [head] + calls.moves.map { move in
            "  stream \(streamName(move.stream, move.application, move.role)) → \(move.to ?? "default source") (\(move.kind.rawValue))"
        }
    }

    /// What a departure does to what played there (§7): `playback (accessory-removed) on
    /// bluez_output.X:` then `  pause #81 Chromium: org.mpris.MediaPlayer2.chromium.instance9 (ancestor)`,
    /// `  hold #82 paplay: no player would pause it: muted until the headset returns`.
    public static func playbackLines(_ playback: PlaybackPreview) -> [String] {
        // Nothing played there: nothing to say (the JSON still carries the departure).
        guard !playback.streams.isEmpty else { return [] }
        let head = "playback (\(playback.reason.rawValue)) on \(playback.sink): \(playback.streams.count) stream(s)"
        return [head] + playback.streams.map { stream in
            let what = stream.player.map { "\($0) (\(stream.match ?? "?"))" } ?? stream.why
            return "  \(stream.action.rawValue) \(streamName(ObjectID(truncatingIfNeeded: stream.stream), stream.application, nil)): \(what)"
        }
    }

    /// `#401 Some Softphone`: a capture stream by id and application (its role without one).
    private static func streamName(_ id: ObjectID, _ application: String?, _ role: String?) -> String {
        "#\(id)" + ((application ?? role).map { " " + $0 } ?? "")
    }

    /// `bluez_output.X: worn put on 5000 ms, primary source · class-order headphones (7 of 7)`:
    /// a sink and its tier values, in tier order.
    public static func sinkLine(_ sink: DecisionRecord.Ranked) -> String {
        let values = sink.tiers.map { "\($0.tier) \($0.value)" }
        return "\(sink.node): " + (values.isEmpty ? "no tier value" : values.joined(separator: " · "))
    }

    /// `decided by worn: beats speakers at worn (put on 5000 ms vs not worn)`.
    public static func deciderLine(_ decider: DecisionRecord.Decider) -> String {
        "decided by \(decider.tier): \(decider.why)"
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text }
        let space = String(repeating: " ", count: width - text.count)
        return right ? space + text : text + space
    }
}
