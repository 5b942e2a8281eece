import AudioGraph
import RoutingPolicy

/// `earshot status` as text, read from the status the control socket sends: shared by the CLI
/// and the D-Bus service's Status (its `explanation`), so both say the same thing.
public enum StatusText {
    /// How decisions are applied, the default and why; `explain` adds every sink's tier values
    /// and every rejection.
    public static func render(_ status: ControlWire.Status, explain: Bool) -> String {
        var lines: [String] = []
        lines.append("mode: \(status.mode)" + (status.sessionManager.map { " (session manager: \([$0, status.sessionManagerVersion].compactMap { $0 }.joined(separator: " ")))" } ?? ""))
        lines.append("pipewire: \(status.remote), " + (status.connected ? "connected" : "not connected"))
        lines.append("host addresses: " + (status.hostAddresses.isEmpty ? "none known" : status.hostAddresses.map(hostAddress).joined(separator: ", ")))
        if let state = status.state { lines.append("state: \(state)") }
        for driver in status.drivers { lines.append("driver: " + Self.driver(driver)) }
        // The decision's shape is DecisionRecord's (RoutingPolicy), read here as JSON.
        guard let decision = status.decision?.json, decision != .null else {
            lines.append("default: no decision yet")
            return TerminalText.lines(lines)
        }
        var head = "default: \(text(decision["default"], none: "(none)"))"
        if let port = decision["port"], port != .null { head += " port \"\(text(port))\"" }
        if let reason = decision["reason"], reason != .null {
            head += " (\(text(reason)), previous: \(text(decision["previous"], none: "(none)")))"
        }
        lines.append(head)
        if let event = decision["port-event"], event != .null {
            lines.append("port event: \"\(text(event["port"]))\" of \(text(event["sink"])) \(text(event["kind"]))")
        }
        lines.append("trigger: \(text(decision["trigger"]))")
        if let error = decision["error"], error != .null {
            lines.append("refused: \(text(error["code"])): \(text(error["message"]))")
        }
        lines.append(text(decision["summary"]))
        // The ranking as eval prints it: one renderer for both (RoutingPolicy's DecisionText).
        let record = try? DecisionRecord(json: decision)
        if let record {
            lines += DecisionText.explanationLines(record, detail: explain ? .full : .summary)
        }
        // The input (§8): absent from an older daemon's status, null when it is not followed.
        if let input = decision["input"] {
            if input == .null {
                lines.append("default source: not followed ([input] follow = \"never\")")
            } else if !text(input["summary"]).hasPrefix("0/0 ") {
                // (A graph without any source says nothing of the input, not even the sink's
                // monitor WirePlumber then names as the default source.)
                var head = "default source: \(text(input["default"], none: "(none)"))"
                if let port = input["port"], port != .null { head += " port \"\(text(port))\"" }
                if let reason = input["reason"], reason != .null {
                    head += " (\(text(reason)), previous: \(text(input["previous"], none: "(none)")))"
                }
                lines.append(head)
                lines += callLines(status.calls)
                lines.append(text(input["summary"]))
                if let recorded = record?.input {
                    lines += DecisionText.explanationLines(
                        ranking: recorded.ranking, decidedBy: recorded.decidedBy, rejected: recorded.rejected, detail: explain ? .full : .summary)
                }
            }
        }
        lines += playbackLines(status.playback)
        // Node names, port labels, driver names and messages are any client's: escaped.
        return TerminalText.lines(lines)
    }

    /// What Earshot paused and holds silent (§7), each with how it was found.
    static func playbackLines(_ playback: ControlWire.PlaybackStatus?) -> [String] {
        guard let playback else { return [] }
        let paused = playback.paused.map { player in
            "paused: \(player.player) (\(Self.matchText(player.match))), on \(player.sink); resumed if \(player.accessory) returns within the window"
        }
        let held = playback.held.map { entry in
            "held silent: " + ControlWire.streamLabel(stream: entry.stream.stream, application: entry.stream.application, role: nil)
                + " (muted: no pause stopped it), on \(entry.sink); unmuted when \(entry.accessory) returns"
        }
        return paused + held
    }

    static func matchText(_ match: String) -> String {
        switch match {
        case "pid": "its stream's process is the player's"
        case "ancestor": "its stream comes from a child of the player's process"
        case "flatpak": "the same Flatpak app and instance as its stream"
        default: match
        }
    }

    /// Where calls record from (§8), aligned under `default source:`, and each stream pointed
    /// there; nothing while calls have no microphone of their own.
    static func callLines(_ calls: CallRoutingOutcome?) -> [String] {
        guard let calls, let source = calls.source else { return [] }
        let indent = String(repeating: " ", count: "default source: ".count)
        return ["calls:" + indent.dropFirst("calls:".count) + ControlWire.callSourceText(source)]
            + calls.streams.map { stream in
                indent + ControlWire.streamLabel(stream: UInt64(stream.stream), application: stream.application, role: stream.role) + ": \(stream.why)"
            }
    }

    /// `AA:BB:CC:DD:EE:FF aap (AirPods Pro) connected, battery left 80% right 75% case 50%, 12 packets`
    /// `accessory show` gives the desktop battery a line of its own (`desktopBattery: false`).
    public static func driver(_ driver: ControlWire.DriverEntry, desktopBattery showsDesktop: Bool = true) -> String {
        var text = "\(driver.address) \(driver.family)" + (driver.name.map { " (\($0))" } ?? "") + " \(driver.connection)"
        if let battery = driver.battery {
            let parts = ["left", "right", "case", "headset"].compactMap { part in battery[part].map { "\(part) \($0)%" } }
            text += ", battery " + parts.joined(separator: " ")
        }
        text += ", \(driver.packets) packet\(driver.packets == 1 ? "" : "s")"
        if driver.skipped > 0 { text += " (\(driver.skipped) skipped)" }
        if let last = driver.lastPacket { text += ", last at \(last)" }
        if showsDesktop, let desktop = driver.desktopBattery { text += ", desktop battery " + desktopBattery(desktop) }
        if let problem = driver.problem { text += ": \(problem)" }
        if driver.wear == "not-reported" {
            text += "; reports no wear" + (driver.wearDetail.map { " (\($0))" } ?? "")
                + ": a reporter of your own can say whether it is worn (earshot report)"
        } else if driver.wear == "reported", let how = driver.wearDetail {
            text += "; wear from \(how)"
        }
        return text
    }

    /// A driver entry's `desktop-battery` in plain words.
    public static func desktopBattery(_ state: String) -> String {
        switch state {
        case "provided": "shown (Earshot is BlueZ's battery provider)"
        case "no-provider-manager": "not shown (BlueZ has no battery provider manager: Experimental = true in /etc/bluetooth/main.conf)"
        case "provided-by-other": "shown from another provider (BlueZ keeps the first)"
        case "off": "off (battery-to-desktop = false)"
        default: state
        }
    }

    /// `11:22:33:44:55:66 (config, bluez hci0)`: one entry of `host-addresses`, also in
    /// `earshot watch`'s host-addresses lines.
    public static func hostAddress(_ host: ControlWire.HostAddressEntry) -> String {
        "\(host.address) (\(host.from.joined(separator: ", ")))"
    }

    private static func text(_ value: JSONValue?, none: String = "none") -> String {
        guard let value, value != .null else { return none }
        return value.propertyText ?? none
    }
}
