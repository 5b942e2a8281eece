import AudioGraph

/// `earshot status` as text, read from the status the control socket sends: shared by the CLI
/// and the D-Bus service's Status (its `explanation`), so both say the same thing.
public enum StatusText {
    /// How decisions are applied, the default and why; `explain` adds every sink's score as a
    /// sum of terms and every rejection.
    public static func render(_ status: ControlWire.Status, explain: Bool) -> String {
        var lines: [String] = []
        lines.append("mode: \(status.mode)" + (status.sessionManager.map { " (session manager: \([$0, status.sessionManagerVersion].compactMap { $0 }.joined(separator: " ")))" } ?? ""))
        lines.append("pipewire: \(status.remote), " + (status.connected ? "connected" : "not connected"))
        lines.append("host addresses: " + (status.hostAddresses.isEmpty ? "none known" : status.hostAddresses.map(hostAddress).joined(separator: ", ")))
        // The decision's shape is DecisionRecord's (RoutingPolicy), read here as JSON.
        guard let decision = status.decision?.json, decision != .null else {
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
    public static func hostAddress(_ host: ControlWire.HostAddressEntry) -> String {
        "\(host.address) (\(host.from.joined(separator: ", ")))"
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
