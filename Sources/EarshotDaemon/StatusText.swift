import AudioGraph

/// `earshot status` as text, read from the status JSON the control socket sends: shared by
/// the CLI and the D-Bus service's Status (its `explanation`), so both say the same thing.
public enum StatusText {
    /// How decisions are applied, the default and why; `explain` adds every sink's score as a
    /// sum of terms and every rejection.
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

    /// `11:22:33:44:55:66 (config, bluez hci0)`: one entry of `host-addresses`, also in
    /// `earshot watch`'s host-addresses lines.
    public static func hostAddress(_ host: JSONValue) -> String {
        guard case .array(let origins)? = host["from"] else { return text(host["address"]) }
        return "\(text(host["address"])) (\(origins.map { text($0) }.joined(separator: ", ")))"
    }

    private static func sum(_ sink: JSONValue) -> String {
        guard case .array(let terms)? = sink["terms"], !terms.isEmpty else { return "\(text(sink["score"])) = 0" }
        return "\(text(sink["score"])) = " + terms.map { "\(text($0["name"])) \(text($0["value"]))" }.joined(separator: " + ")
    }

    private static func text(_ value: JSONValue?, none: String = "none") -> String {
        guard let value, value != .null else { return none }
        return value.propertyText ?? none
    }
}
