import AudioGraph
import EarshotDaemon
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

    /// One line per event: route changes as `at reason previous -> current accessory`, host
    /// addresses as `at host addresses A (config), B (bluez hci0)  added B`.
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
        case "host-addresses":
            var line = "\(at)  host addresses \(hostAddresses(fields["addresses"]))"
            let added = list(fields["added"], empty: ""), removed = list(fields["removed"], empty: "")
            if !added.isEmpty { line += "  added \(added)" }
            if !removed.isEmpty { line += "  removed \(removed)" }
            return line
        default:
            return "\(at)  \(name)  \(JSONValue.object(fields).canonicalText)"
        }
    }

    private static func text(_ value: JSONValue?, none: String = "none") -> String {
        guard let value, value != .null else { return none }
        return value.propertyText ?? none
    }

    /// `11:22:33:44:55:66 (config, bluez hci0), …`, as `earshot status` lists them.
    private static func hostAddresses(_ value: JSONValue?) -> String {
        guard case .array(let entries)? = value, !entries.isEmpty else { return "none known" }
        return entries.map(StatusText.hostAddress).joined(separator: ", ")
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
