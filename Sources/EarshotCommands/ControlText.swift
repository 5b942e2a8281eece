import AudioGraph
import Foundation

/// The text forms of control replies and events, read from the JSON the daemon sent (the CLI
/// shows what the protocol carries, nothing more).
enum ControlText {
    /// An accessory object of a reply or of `list`, as an indented block.
    static func accessory(_ value: JSONValue) -> String {
        var lines = [text(value["accessory"])]
        if let reporter = value["reporter"], reporter != .null { lines.append("  reporter: \(text(reporter))") }
        lines.append("  capabilities: \(list(value["capabilities"], empty: "none"))")
        var placement = text(value["placement"], none: "unknown")
        if value["stale"] == .bool(true) { placement += " (restored from disk, not yet confirmed by its reporter)" }
        lines.append("  placement: \(placement)")
        lines.append("  primary-source: \(text(value["primary-source"]))")
        lines.append("  secondary-source: \(text(value["secondary-source"]))")
        if let sinks = value["sinks"] { lines.append("  sinks: \(list(sinks, empty: "none present"))") }
        return lines.joined(separator: "\n")
    }

    static func accessories(_ value: JSONValue?) -> String {
        guard case .array(let items)? = value, !items.isEmpty else { return "no accessories registered" }
        return items.map(accessory).joined(separator: "\n")
    }

    /// `earshot status`: how decisions are applied, the default and why; `explain` adds every
    /// sink's score as a sum of terms and every rejection.
    static func status(_ value: JSONValue, explain: Bool) -> String {
        var lines: [String] = []
        let manager = value["session-manager"].flatMap { $0 == .null ? nil : text($0) }
        lines.append("mode: \(text(value["mode"]))" + (manager.map { " (session manager: \($0))" } ?? ""))
        lines.append("pipewire: \(text(value["remote"])), " + (value["connected"] == .bool(true) ? "connected" : "not connected"))
        guard let decision = value["decision"], decision != .null else {
            lines.append("default: no decision yet")
            return lines.joined(separator: "\n")
        }
        var head = "default: \(text(decision["default"], none: "(none)"))"
        if let reason = decision["reason"], reason != .null {
            head += " (\(text(reason)), previous: \(text(decision["previous"], none: "(none)")))"
        }
        lines.append(head)
        lines.append("trigger: \(text(decision["trigger"]))")
        if let error = decision["error"], error != .null {
            lines.append("refused: \(text(error["code"])): \(text(error["message"]))")
        }
        lines.append(text(decision["summary"]))
        guard case .array(let ranking)? = decision["ranking"] else { return lines.joined(separator: "\n") }
        if !explain {
            if let winner = ranking.first { lines.append("winner: \(text(winner["node"])): \(sum(winner))") }
            return lines.joined(separator: "\n")
        }
        for (place, sink) in ranking.enumerated() {
            lines.append("#\(place + 1) \(text(sink["node"])): \(sum(sink))")
            if case .array(let terms)? = sink["terms"] {
                for term in terms { lines.append("    \(text(term["value"])) \(text(term["name"])): \(text(term["why"]))") }
            }
        }
        if case .array(let rejected)? = decision["rejected"] {
            for sink in rejected { lines.append("✗ \(text(sink["node"])): \(text(sink["why"]))") }
        }
        return lines.joined(separator: "\n")
    }

    /// One line per event: route changes as `at reason previous -> current accessory`.
    static func event(name: String, _ fields: [String: JSONValue]) -> String {
        let at = time(fields["at"])
        switch name {
        case "route-change":
            var line = "\(at)  \(text(fields["reason"]))  \(text(fields["previous"], none: "(none)")) -> \(text(fields["current"], none: "(none)"))"
            if let accessory = fields["accessory"], accessory != .null { line += "  accessory \(text(accessory))" }
            return line
        case "accessory":
            var line = "\(at)  accessory \(text(fields["change"])) \(text(fields["accessory"]))"
            if let placement = fields["configuration"]?["placement"], placement != .null { line += "  placement \(text(placement))" }
            return line
        case "playback":
            var players = ""
            if case .array(let names)? = fields["players"] { players = names.map { text($0) }.joined(separator: ", ") }
            var line = "\(at)  \(text(fields["action"])) \(players)  (\(text(fields["reason"])))"
            if let sink = fields["sink"], sink != .null { line += "  sink \(text(sink))" }
            return line
        default:
            return "\(at)  \(name)  \(JSONValue.object(fields).canonicalText)"
        }
    }

    private static func sum(_ sink: JSONValue) -> String {
        guard case .array(let terms)? = sink["terms"], !terms.isEmpty else { return "\(text(sink["score"])) = 0" }
        return "\(text(sink["score"])) = " + terms.map { "\(text($0["name"])) \(text($0["value"]))" }.joined(separator: " + ")
    }

    private static func text(_ value: JSONValue?, none: String = "none") -> String {
        guard let value, value != .null else { return none }
        return value.propertyText ?? none
    }

    private static func list(_ value: JSONValue?, empty: String) -> String {
        guard case .array(let items)? = value, !items.isEmpty else { return empty }
        return items.map { text($0) }.joined(separator: ", ")
    }

    /// Wall-clock milliseconds as UTC ISO 8601, so lines from different machines compare.
    private static func time(_ value: JSONValue?) -> String {
        guard case .integer(let milliseconds)? = value else { return text(value) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
