import AudioGraph
import RoutingPolicy

/// `earshot status` as text, read from the status JSON the control socket sends: shared by
/// the CLI and the D-Bus service's Status (its `explanation`), so both say the same thing.
public enum StatusText {
    /// How decisions are applied, the default and why; `explain` adds every sink's tier values
    /// and every rejection.
    public static func render(_ value: JSONValue, explain: Bool) -> String {
        var lines: [String] = []
        let manager = value["session-manager"].flatMap { $0 == .null ? nil : text($0) }
        lines.append("mode: \(text(value["mode"]))" + (manager.map { " (session manager: \($0))" } ?? ""))
        lines.append("pipewire: \(text(value["remote"])), " + (value["connected"] == .bool(true) ? "connected" : "not connected"))
        if case .array(let hosts)? = value["host-addresses"] {
            lines.append("host addresses: " + (hosts.isEmpty ? "none known" : hosts.map(hostAddress).joined(separator: ", ")))
        }
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
        // The ranking as eval prints it: one renderer for both (RoutingPolicy's DecisionText).
        if let record = try? DecisionRecord(json: decision) {
            lines += DecisionText.explanationLines(record, detail: explain ? .full : .summary)
        }
        return lines.joined(separator: "\n")
    }

    /// `11:22:33:44:55:66 (config, bluez hci0)`: one entry of `host-addresses`, also in
    /// `earshot watch`'s host-addresses lines.
    public static func hostAddress(_ host: JSONValue) -> String {
        guard case .array(let origins)? = host["from"] else { return text(host["address"]) }
        return "\(text(host["address"])) (\(origins.map { text($0) }.joined(separator: ", ")))"
    }

    private static func text(_ value: JSONValue?, none: String = "none") -> String {
        guard let value, value != .null else { return none }
        return value.propertyText ?? none
    }
}
