import Foundation

/// Every config key with its type, default, range and meaning: the single source for the
/// loader's unknown-key check, `earshot config show --schema`, the shipped config's comments
/// and docs/policy.md.
public struct ConfigKey: Sendable, Hashable {
    /// Dotted path; `rule[].priority` is a field of each `[[rule]]`.
    public var path: String
    public var type: String
    /// The default as TOML text (`—` when there is none).
    public var defaultValue: String
    public var range: String
    public var meaning: String

    /// The table the key lives in (`timing`, `rule[]`, or `` for the top level).
    public var table: String { path.split(separator: ".").dropLast().joined(separator: ".") }
    public var name: String { String(path.split(separator: ".").last ?? "") }
}

public enum ConfigSchema {
    static let weightRange = "0 … 1000000000000000"
    static let defaults = PolicyConfig.builtIn

    private static func list(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
    private static let classes = SinkClass.allCases.map(\.rawValue).joined(separator: ", ")

    public static let keys: [ConfigKey] = [
        ConfigKey(path: "host-addresses", type: "array of strings", defaultValue: "[]", range: "Bluetooth addresses AA:BB:CC:DD:EE:FF",
                  meaning: "This host's Bluetooth adapter addresses, added to those the daemon reads from BlueZ (all there are without BlueZ); an accessory whose sources are set and none is one of these plays for another host."),
        ConfigKey(path: "restore-previous", type: "boolean", defaultValue: "\(defaults.restorePrevious)", range: "true, false",
                  meaning: "When a worn accessory comes off, return to the sink that was default before it took the output."),
        ConfigKey(path: "class-order", type: "array of strings", defaultValue: list(defaults.classOrder.map(\.rawValue)), range: "distinct classes of: \(classes)",
                  meaning: "Built-in class order, best first; unlisted classes rank last."),
        ConfigKey(path: "personal-classes", type: "array of strings", defaultValue: list(defaults.personalClasses.map(\.rawValue)), range: "distinct classes of: \(classes)",
                  meaning: "Classes whose sinks take the output when they arrive."),
        ConfigKey(path: "timing.on-delay-ms", type: "integer", defaultValue: "\(defaults.onDelay)", range: "0 … 60000",
                  meaning: "How long an accessory must stay worn before the output switches to it."),
        ConfigKey(path: "timing.off-grace-ms", type: "integer", defaultValue: "\(defaults.offGrace)", range: "0 … 60000",
                  meaning: "How long an accessory must stay off before the output leaves it; a flap inside it changes nothing."),
        ConfigKey(path: "weights.user-override", type: "integer", defaultValue: "\(defaults.weights.userOverride)", range: weightRange,
                  meaning: "Score of the sink the user chose by hand while the override holds (§2.1)."),
        ConfigKey(path: "weights.restore-previous", type: "integer", defaultValue: "\(defaults.weights.restorePrevious)", range: weightRange,
                  meaning: "Score of the sink handed back when an accessory comes off (§4)."),
        ConfigKey(path: "weights.worn", type: "integer", defaultValue: "\(defaults.weights.worn)", range: weightRange,
                  meaning: "Per recency rank of a worn audio-switching accessory; the most recently put on ranks highest (§2.2)."),
        ConfigKey(path: "weights.primary-source", type: "integer", defaultValue: "\(defaults.weights.primarySource)", range: weightRange,
                  meaning: "Bonus of a worn accessory whose primary source is this host (§2.2)."),
        ConfigKey(path: "weights.arrival", type: "integer", defaultValue: "\(defaults.weights.arrival)", range: weightRange,
                  meaning: "Per recency rank of a personal sink that arrived after start (§2.3)."),
        ConfigKey(path: "weights.last-choice", type: "integer", defaultValue: "\(defaults.weights.lastChoice)", range: weightRange,
                  meaning: "Score of the user's last hand-picked sink (§2.4)."),
        ConfigKey(path: "weights.rule-priority", type: "integer", defaultValue: "\(defaults.weights.rulePriority)", range: weightRange,
                  meaning: "Multiplies the priority of the matching [[rule]] (§2.5)."),
        ConfigKey(path: "weights.class-order", type: "integer", defaultValue: "\(defaults.weights.classOrder)", range: weightRange,
                  meaning: "Per place from the bottom of class-order (§2.6)."),
        ConfigKey(path: "playback.pause-when-removed", type: "boolean", defaultValue: "\(defaults.playback.pauseWhenRemoved)", range: "true, false",
                  meaning: "Pause the MPRIS players playing on the worn accessory that holds the output when it comes off (after the off-grace) or its sink disappears."),
        ConfigKey(path: "playback.resume-when-worn", type: "boolean", defaultValue: "\(defaults.playback.resumeWhenWorn)", range: "true, false",
                  meaning: "Resume the players Earshot paused, if still paused, when the accessory is worn again within the resume window."),
        ConfigKey(path: "playback.resume-window-ms", type: "integer", defaultValue: "\(defaults.playback.resumeWindow)", range: "0 … 3600000",
                  meaning: "How long after the pause a return still resumes; after it the paused players are forgotten."),
        ConfigKey(path: "rule[].match", type: "table of strings", defaultValue: "—", range: "property = glob (* and ?), at least one",
                  meaning: "Nodes whose properties (node, then device) all match; e.g. { \"node.name\" = \"alsa_output.*hdmi*\" }."),
        ConfigKey(path: "rule[].priority", type: "integer", defaultValue: "0", range: "-1000 … 1000",
                  meaning: "Priority of matching sinks (§2.5); the first matching rule counts."),
        ConfigKey(path: "rule[].ignore", type: "boolean", defaultValue: "false", range: "true, false",
                  meaning: "Never choose matching sinks automatically (§1); excludes priority."),
        ConfigKey(path: "accessory[].address", type: "string", defaultValue: "—", range: "AA:BB:CC:DD:EE:FF",
                  meaning: "Bluetooth address (api.bluez5.address of the node or its device)."),
        ConfigKey(path: "accessory[].name", type: "string", defaultValue: "—", range: "glob",
                  meaning: "node.name glob."),
        ConfigKey(path: "accessory[].vendor-id", type: "string", defaultValue: "—", range: "as in device.vendor.id",
                  meaning: "device.vendor.id, exactly."),
        ConfigKey(path: "accessory[].product-id", type: "string", defaultValue: "—", range: "as in device.product.id",
                  meaning: "device.product.id, exactly."),
        ConfigKey(path: "accessory[].bus", type: "string", defaultValue: "—", range: "bluetooth, usb, pci, …",
                  meaning: "device.bus, exactly."),
        ConfigKey(path: "accessory[].form-factor", type: "string", defaultValue: "—", range: "headphone, headset, speaker, …",
                  meaning: "device.form-factor, exactly."),
        ConfigKey(path: "accessory[].match", type: "table of strings", defaultValue: "{}", range: "property = glob",
                  meaning: "Any other properties that must match."),
        ConfigKey(path: "accessory[].capabilities", type: "array of strings", defaultValue: "—", range: "audio-switching",
                  meaning: "Makes matching sinks this accessory without a reporter; without audio-switching only the user chooses them."),
        ConfigKey(path: "accessory[].reporter", type: "string", defaultValue: "—", range: "reverse-DNS name",
                  meaning: "Only this reporter may register the accessory; others get invalid-request."),
    ]

    public static func keys(inTable table: String) -> [ConfigKey] { keys.filter { $0.table == table } }

    /// Tables that hold keys (`timing`, `rule[]`…), in schema order.
    public static var tables: [String] {
        var seen: [String] = []
        for key in keys where !key.table.isEmpty && !seen.contains(key.table) { seen.append(key.table) }
        return seen
    }

    /// The schema as a Markdown table, for docs/policy.md.
    public static var markdownTable: String {
        var lines = ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
        for key in keys {
            let cells = [key.path, key.type, key.defaultValue, key.range, key.meaning].map { $0.replacingOccurrences(of: "|", with: "\\|") }
            lines.append("| `\(cells[0])` | \(cells[1]) | `\(cells[2])` | \(cells[3]) | \(cells[4]) |")
        }
        return lines.joined(separator: "\n")
    }
}
