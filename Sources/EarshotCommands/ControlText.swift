import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials

/// The text forms of control replies and events, read from what the daemon sent (the CLI
/// shows what the protocol carries, nothing more).
enum ControlText {
    /// An accessory object of a reply, as an indented block.
    static func accessory(_ accessory: ControlWire.Accessory?) -> String {
        guard let accessory else { return "none" }
        return block(accessory, reporter: nil, stale: false, sinks: nil)
    }

    /// An entry of `list`: the accessory with its reporter, whether it is stale and its sinks.
    static func accessory(_ entry: ControlWire.ListedAccessory) -> String {
        block(entry.accessory, reporter: entry.reporter, stale: entry.stale, sinks: entry.sinks, driver: entry.driver)
    }

    /// A current reply: the accessory with its reporter and, when a built-in driver reads it,
    /// the driver's state.
    static func accessory(_ result: ControlWire.AccessoryResult) -> String {
        guard let accessory = result.accessory else { return "none" }
        return block(accessory, reporter: result.reporter, stale: false, sinks: nil, driver: result.driver)
    }

    static func accessories(_ entries: [ControlWire.ListedAccessory]) -> String {
        entries.isEmpty ? "no accessories registered" : entries.map(accessory).joined(separator: "\n")
    }

    private static func block(
        _ accessory: ControlWire.Accessory, reporter: String?, stale: Bool, sinks: [String]?, driver: ControlWire.DriverEntry? = nil
    ) -> String {
        let configuration = accessory.configuration
        var lines = [accessory.accessory]
        if let reporter { lines.append("  reporter: \(reporter)") }
        if let driver {
            lines.append("  driver: " + StatusText.driver(driver, desktopBattery: false))
            if let desktop = driver.desktopBattery { lines.append("  desktop battery: " + StatusText.desktopBattery(desktop)) }
        }
        lines.append("  capabilities: \(list(configuration.capabilities, empty: "none"))")
        var placement = configuration.placement ?? "unknown"
        if stale { placement += " (restored from disk, not yet confirmed by its reporter)" }
        lines.append("  placement: \(placement)")
        lines.append("  primary-source: \(configuration.primarySource ?? "none")")
        lines.append("  secondary-source: \(configuration.secondarySource ?? "none")")
        if let sinks { lines.append("  sinks: \(list(sinks, empty: "none present"))") }
        // Accessory and reporter names, sinks and the driver's headset name: escaped.
        return TerminalText.lines(lines)
    }

    /// One line per event: route changes as `at reason previous -> current accessory`, host
    /// addresses as `at host addresses A (config), B (bluez hci0)  added B`, a call's stream as
    /// `at stream #401 App (Communication) -> bluez_input.… (call)`. Node names, ports
    /// and the rest are any client's: the line is escaped (TerminalText), so it stays one line.
    static func event(_ event: ControlWire.Event) -> String {
        TerminalText.escape(line(event))
    }

    private static func line(_ event: ControlWire.Event) -> String {
        switch event {
        case .routeChange(let change):
            let side = change.direction == .input ? "input " : ""
            var line = "\(time(change.at))  \(change.reason)  \(side)\(change.previous ?? "(none)") -> \(change.current ?? "(none)")"
            if let accessory = change.accessory { line += "  accessory \(accessory)" }
            if let event = change.portEvent {
                line += "  port \"\(event.port)\" \(event.kind)"
            } else if let port = change.port, port != change.previousPort {
                line += "  port \"\(port)\""
            }
            return line
        case .accessory(let change):
            var line = "\(time(change.at))  accessory \(change.change) \(change.accessory)"
            if let placement = change.configuration?.placement { line += "  placement \(placement)" }
            return line
        case .playback(let change):
            let streams = change.streams.map { stream in "stream \(stream.stream)" + (stream.application.map { " (\($0))" } ?? "") }
            var line = "\(time(change.at))  \(change.action) \((change.players + streams).joined(separator: ", "))  (\(change.reason))"
            if let sink = change.sink { line += "  sink \(sink)" }
            let matches = change.players.compactMap { name in change.matches[name].map { "\(name) by \($0)" } }
            if !matches.isEmpty { line += "  matched \(matches.joined(separator: ", "))" }
            return line
        case .hostAddresses(let change):
            let addresses = change.addresses.isEmpty ? "none known" : change.addresses.map(StatusText.hostAddress).joined(separator: ", ")
            var line = "\(time(change.at))  host addresses \(addresses)"
            if !change.added.isEmpty { line += "  added \(change.added.joined(separator: ", "))" }
            if !change.removed.isEmpty { line += "  removed \(change.removed.joined(separator: ", "))" }
            return line
        case .streamMoved(let move): return "\(time(move.at))  \(move.sentence)"
        case .callSource(let change): return "\(time(change.at))  \(change.sentence)"
        case .other(let name, let json):
            let at: String = if case .integer(let milliseconds)? = json["at"] { time(milliseconds) } else { json["at"]?.propertyText ?? "none" }
            return "\(at)  \(name)  \(json.canonicalText)"
        }
    }

    private static func list(_ items: [String], empty: String) -> String {
        items.isEmpty ? empty : items.joined(separator: ", ")
    }

    /// Wall-clock milliseconds as UTC ISO 8601, so lines from different machines compare.
    private static func time(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
