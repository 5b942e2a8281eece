import FoundationEssentials

/// One config key, declared once: its name, type, default, range and meaning, and for the keys
/// of `PolicyConfig` itself how to read it into the config and write it back. The loader, the
/// renderer (`earshot config show --effective`, the shipped config/earshot.toml), `earshot
/// config show --schema` and the table in docs/policy.md all come from these declarations.
public struct ConfigKey: Sendable {
    /// Dotted path; `rule[].priority` is a field of each `[[rule]]`.
    public let path: String
    public let type: String
    /// The default as TOML text (`—` when there is none).
    public let defaultValue: String
    public let range: String
    public let meaning: String
    /// The allowed values of an integer key.
    public let integers: ClosedRange<Int>?
    /// Reads the key into its `PolicyConfig` field and renders that field as TOML; nil for the
    /// fields of `[[rule]]` and `[[accessory]]`, which their tables' readers build as a whole.
    let field: Field?

    struct Field: Sendable {
        let read: @Sendable (inout ConfigReader, ConfigValue, ConfigReader.Path, inout PolicyConfig) -> Void
        /// The value in force as TOML (for a key left out, the value it falls back to).
        let render: @Sendable (PolicyConfig) -> String
        /// Set for a key that may be left out to take another's value (`[input] tier-order`).
        var fallback: Fallback?
    }

    /// What a key left out takes instead, and whether a config sets the key.
    struct Fallback: Sendable {
        /// `the top-level tier-order`: the schema's default, and what `--effective` says.
        let name: String
        let isSet: @Sendable (PolicyConfig) -> Bool
    }

    /// The table the key lives in (`timing`, `rule[]`, or `` for the top level).
    public var table: String { path.split(separator: ".").dropLast().joined(separator: ".") }
    public var name: String { String(path.split(separator: ".").last ?? "") }

    init(path: String, type: String, range: String, meaning: String, integers: ClosedRange<Int>? = nil, field: Field) {
        self.path = path
        self.type = type
        self.range = range
        self.meaning = meaning
        self.integers = integers
        self.field = field
        defaultValue = field.fallback?.name ?? field.render(.builtIn)
    }

    /// A field of an array of tables (`rule[]`, `accessory[]`).
    init(element path: String, type: String, defaultValue: String, range: String, meaning: String, integers: ClosedRange<Int>? = nil) {
        self.path = path
        self.type = type
        self.defaultValue = defaultValue
        self.range = range
        self.meaning = meaning
        self.integers = integers
        field = nil
    }

    static func boolean(_ path: String, _ keyPath: WritableKeyPath<PolicyConfig, Bool> & Sendable, _ meaning: String) -> ConfigKey {
        ConfigKey(
            path: path, type: "boolean", range: "true, false", meaning: meaning,
            field: Field(
                read: { reader, value, at, config in reader.boolean(value, at).map { config[keyPath: keyPath] = $0 } },
                render: { "\($0[keyPath: keyPath])" }))
    }

    static func milliseconds(
        _ path: String, _ keyPath: WritableKeyPath<PolicyConfig, Milliseconds> & Sendable, in range: ClosedRange<Int>, _ meaning: String
    ) -> ConfigKey {
        ConfigKey(
            path: path, type: "integer", range: "\(range.lowerBound) … \(range.upperBound)", meaning: meaning, integers: range,
            field: Field(
                read: { reader, value, at, config in reader.integer(value, at, in: range).map { config[keyPath: keyPath] = Milliseconds($0) } },
                render: { "\($0[keyPath: keyPath])" }))
    }

    static func classes(_ path: String, _ keyPath: WritableKeyPath<PolicyConfig, [SinkClass]> & Sendable, _ meaning: String) -> ConfigKey {
        ConfigKey(
            path: path, type: "array of strings", range: "distinct classes of: \(SinkClass.allCases.map(\.rawValue).joined(separator: ", "))",
            meaning: meaning,
            field: Field(
                read: { reader, value, at, config in reader.classes(value, at).map { config[keyPath: keyPath] = $0 } },
                render: { ConfigRenderer.list($0[keyPath: keyPath].map(\.rawValue)) }))
    }

    static func hostAddresses(_ path: String, _ keyPath: WritableKeyPath<PolicyConfig, [BluetoothAddress]> & Sendable, _ meaning: String) -> ConfigKey {
        ConfigKey(
            path: path, type: "array of strings", range: "Bluetooth addresses AA:BB:CC:DD:EE:FF", meaning: meaning,
            field: Field(
                read: { reader, value, at, config in
                    reader.parsedList(value, at, expected: "a Bluetooth address like AA:BB:CC:DD:EE:FF", { BluetoothAddress($0) })
                        .map { config[keyPath: keyPath] = $0 }
                },
                render: { ConfigRenderer.list($0[keyPath: keyPath].map(\.description)) }))
    }

    static func integer(_ path: String, _ keyPath: WritableKeyPath<PolicyConfig, Int> & Sendable, in range: ClosedRange<Int>, _ meaning: String) -> ConfigKey {
        ConfigKey(
            path: path, type: "integer", range: "\(range.lowerBound) … \(range.upperBound)", meaning: meaning, integers: range,
            field: Field(
                read: { reader, value, at, config in reader.integer(value, at, in: range).map { config[keyPath: keyPath] = $0 } },
                render: { "\($0[keyPath: keyPath])" }))
    }

    /// A string that names one case of `Choice` (`drivers.in-ear`, `input.follow`).
    static func choice<Choice: RawRepresentable<String> & CaseIterable & Sendable>(
        _ path: String, _ keyPath: WritableKeyPath<PolicyConfig, Choice> & Sendable, _ meaning: String
    ) -> ConfigKey {
        let names = Choice.allCases.map(\.rawValue)
        return ConfigKey(
            path: path, type: "string", range: names.map { "\"\($0)\"" }.joined(separator: ", "), meaning: meaning,
            field: Field(
                read: { reader, value, at, config in
                    guard let text = reader.string(value, at) else { return }
                    guard let rule = Choice(rawValue: text) else {
                        reader.fail(at, "\(ConfigReader.dotted(at)) must be one of \(names.joined(separator: ", ")), not \"\(text)\"")
                        return
                    }
                    config[keyPath: keyPath] = rule
                },
                render: { "\"\($0[keyPath: keyPath].rawValue)\"" }))
    }

    /// Strings, at most `limit` of them and each at most `length` bytes, none empty.
    static func strings(
        _ path: String, _ keyPath: WritableKeyPath<PolicyConfig, [String]> & Sendable, limit: Int, length: Int, _ meaning: String
    ) -> ConfigKey {
        ConfigKey(
            path: path, type: "array of strings", range: "at most \(limit) non-empty strings of at most \(length) bytes", meaning: meaning,
            field: Field(
                read: { reader, value, at, config in
                    guard let texts = reader.strings(value, at) else { return }
                    guard texts.count <= limit else {
                        reader.fail(at, "\(ConfigReader.dotted(at)) holds \(texts.count) strings; at most \(limit) are allowed")
                        return
                    }
                    if let bad = texts.first(where: { $0.isEmpty || $0.utf8.count > length }) {
                        reader.fail(at, element: bad, "\(ConfigReader.dotted(at)): \(bad.isEmpty ? "an empty string" : "a string of \(bad.utf8.count) bytes") is not allowed (1 … \(length) bytes)")
                        return
                    }
                    config[keyPath: keyPath] = texts
                },
                render: { ConfigRenderer.list($0[keyPath: keyPath]) }))
    }

    static let tierRange = "every tier exactly once: \(RankTier.allCases.map(\.rawValue).joined(separator: ", "))"

    static func tiers(_ path: String, _ keyPath: WritableKeyPath<PolicyConfig, [RankTier]> & Sendable, _ meaning: String) -> ConfigKey {
        ConfigKey(
            path: path, type: "array of strings", range: tierRange, meaning: meaning,
            field: Field(
                read: { reader, value, at, config in reader.tiers(value, at).map { config[keyPath: keyPath] = $0 } },
                render: { ConfigRenderer.list($0[keyPath: keyPath].map(\.rawValue)) }))
    }

    /// A tier order that, left out, is `fallback`'s: read and checked as `tiers`.
    static func tiers(
        _ path: String, _ keyPath: WritableKeyPath<PolicyConfig, [RankTier]?> & Sendable,
        fallback: KeyPath<PolicyConfig, [RankTier]> & Sendable, named fallbackName: String, _ meaning: String
    ) -> ConfigKey {
        ConfigKey(
            path: path, type: "array of strings", range: tierRange, meaning: meaning,
            field: Field(
                read: { reader, value, at, config in reader.tiers(value, at).map { config[keyPath: keyPath] = $0 } },
                render: { ConfigRenderer.list(($0[keyPath: keyPath] ?? $0[keyPath: fallback]).map(\.rawValue)) },
                fallback: Fallback(name: fallbackName, isSet: { $0[keyPath: keyPath] != nil })))
    }
}

public enum ConfigSchema {
    public static let keys: [ConfigKey] = [
        .hostAddresses(
            "host-addresses", \.hostAddresses,
            "This host's Bluetooth adapter addresses, added to those the daemon reads from BlueZ (all there are without BlueZ); an accessory whose sources are set and none is one of these plays for another host."),
        .boolean(
            "restore-previous", \.restorePrevious,
            "When a worn accessory comes off, return to the sink that was default before it took the output."),
        .tiers(
            "tier-order", \.tierOrder,
            "The ranking's tiers, compared in this order: the first tier where two sinks differ decides, then the node name (§2). A list without session-priority (written for 0.2) gets it right after class-order."),
        .classes("class-order", \.classOrder, "Built-in class order, best first; unlisted classes rank last."),
        .classes("personal-classes", \.personalClasses, "Classes whose sinks take the output when they arrive (a headphones or headset port plugged in counts as an arrival); digital and hdmi never do."),
        .milliseconds(
            "timing.on-delay-ms", \.onDelay, in: 0...60_000,
            "How long an accessory must stay worn before the output switches to it."),
        .milliseconds(
            "timing.off-grace-ms", \.offGrace, in: 0...60_000,
            "How long an accessory must stay off before the output leaves it; a flap inside it changes nothing."),
        .milliseconds(
            "timing.arrival-settle-ms", \.arrivalSettle, in: 0...10_000,
            "How long a sink or source that appeared must stay before it counts (it takes the output only then); one that comes and goes inside it changes nothing. 0 counts it at once."),
        .milliseconds(
            "timing.flap-hold-ms", \.flapHold, in: 0...600_000,
            "A sink or source that arrives 6 times within 60 s keeps flapping: it is said once and counts only after it has stayed this long."),
        .boolean(
            "playback.pause-when-removed", \.playback.pauseWhenRemoved,
            "Pause the MPRIS players playing on the worn accessory that holds the output when it comes off (after the off-grace) or its sink disappears."),
        .boolean(
            "playback.resume-when-worn", \.playback.resumeWhenWorn,
            "Resume the players Earshot paused, if still paused, when the accessory is worn again within the resume window."),
        .milliseconds(
            "playback.resume-window-ms", \.playback.resumeWindow, in: 0...3_600_000,
            "How long after the pause a return still resumes (and unmutes what was held); after it the paused players are forgotten, and what was held stays muted until you unmute it."),
        .boolean(
            "playback.pause-when-other-host", \.playback.pauseWhenOtherHost,
            "Pause (and hold) what plays on the worn accessory that holds the output when it starts playing for another host (a phone took it: its primary source switched away), as when it comes off; resume when it plays for this host again within the resume window."),
        .choice(
            "playback.hold-unpausable", \.playback.holdUnpausable,
            "A stream that played on the departing headset and that no pause stopped (no MPRIS player is its application's, or the player did not report Paused in time): \"mute\" mutes it before its audio can reach the new sink and unmutes it when the headset returns within the resume window (only if Earshot muted it and nobody touched it since); \"leave\" lets it play on. A call's streams are never held."),
        .boolean("drivers.aap", \.drivers.aap, "Run the built-in AirPods/Beats driver (AAP): connected AirPods report whether they are worn, with no reporter to set up."),
        .boolean("drivers.galaxy-buds", \.drivers.galaxyBuds, "Run the built-in Samsung Galaxy Buds driver (RFCOMM through BlueZ)."),
        .boolean("drivers.sony", \.drivers.sony, "Run the built-in Sony headphones and earbuds driver (MDR over RFCOMM through BlueZ)."),
        .choice("drivers.in-ear", \.drivers.inEar, "When earbuds count as in the ear: \"either\" while at least one bud is, \"both\" only while both are."),
        .hostAddresses(
            "drivers.ignore", \.drivers.ignore,
            "Devices the drivers leave alone (another program reads them, or your own reporter reports them)."),
        .boolean(
            "drivers.battery-to-desktop", \.drivers.batteryToDesktop,
            "Show each driven headset's battery on the desktop: Earshot is BlueZ's battery provider (org.bluez.BatteryProviderManager1; BlueZ before 5.71 needs Experimental = true), so UPower and the battery menus see it."),
        .choice(
            "input.follow", \.input.follow,
            "Which microphone Earshot makes the default source: \"worn-headset\" moves it with the output to the worn headset's microphone and back when the headset comes off (the same rules as the output, §8); \"never\" leaves the default source alone."),
        .choice(
            "input.bluetooth-microphone", \.input.bluetoothMicrophone,
            "When a Bluetooth headset's microphone is used: \"calls\" keeps the headset playing A2DP (recording from it switches it to the 16 kHz hands-free profile) by leaving it out of the default source and pointing only calls (media.role Communication, or an application of call-applications) at it; \"always\" treats it as any microphone; \"never\" never chooses one by itself (§8)."),
        .strings(
            "input.call-applications", \.input.callApplications, limit: InputConfig.callApplicationLimit,
            length: InputConfig.callApplicationLength,
            "application.name values whose capture streams are calls (besides media.role = Communication); the default is WirePlumber 0.4's list for switching a headset to its hands-free profile."),
        .tiers(
            "input.tier-order", \.input.tierOrder, fallback: \.tierOrder, named: "the top-level tier-order",
            "The input's own tier order, checked as the top-level tier-order; left out, the input ranks by the top-level tier-order as the output does. Put rule-priority above worn to keep a microphone a [[rule]] prefers while a headset is worn (§8)."),
        .integer(
            "record.keep-hours", \.recordKeepHours, in: 0...168,
            "Keep a rolling recording of the last this many hours of inputs (for earshot record --since); 0 keeps none. Bounded on disk, files 0600."),
        ConfigKey(element: "rule[].match", type: "table, or array of tables", defaultValue: "—",
                  range: "property = glob (* and ?), \"~regex\", \"!\" before either, or false (not set) / true (set); at least one",
                  meaning: "Nodes whose properties (node, then device) all match (see Match values); e.g. { \"node.name\" = \"alsa_output.*hdmi*\" }; with [{ … }, { … }] any one table may match."),
        ConfigKey(element: "rule[].priority", type: "integer", defaultValue: "0", range: "-1000 … 1000",
                  meaning: "Priority of matching sinks and sources (§2.4, §8); the first matching rule counts. Match media.class (\"Audio/Sink\", \"Audio/Source\") to keep a rule to one side.", integers: -1000...1000),
        ConfigKey(element: "rule[].ignore", type: "boolean", defaultValue: "false", range: "true, false",
                  meaning: "Never choose matching sinks or sources automatically (§1, §8); excludes priority."),
        ConfigKey(element: "accessory[].address", type: "string", defaultValue: "—", range: "AA:BB:CC:DD:EE:FF",
                  meaning: "Bluetooth address (api.bluez5.address of the node or its device)."),
        ConfigKey(element: "accessory[].name", type: "string", defaultValue: "—", range: "glob",
                  meaning: "node.name glob."),
        ConfigKey(element: "accessory[].vendor-id", type: "string", defaultValue: "—", range: "as in device.vendor.id",
                  meaning: "device.vendor.id, exactly."),
        ConfigKey(element: "accessory[].product-id", type: "string", defaultValue: "—", range: "as in device.product.id",
                  meaning: "device.product.id, exactly."),
        ConfigKey(element: "accessory[].bus", type: "string", defaultValue: "—", range: "bluetooth, usb, pci, …",
                  meaning: "device.bus, exactly."),
        ConfigKey(element: "accessory[].form-factor", type: "string", defaultValue: "—", range: "headphone, headset, speaker, …",
                  meaning: "device.form-factor, exactly."),
        ConfigKey(element: "accessory[].match", type: "table", defaultValue: "{}", range: "property = pattern, as in rule[].match (one table)",
                  meaning: "Any other properties that must match."),
        ConfigKey(element: "accessory[].capabilities", type: "array of strings", defaultValue: "—", range: "audio-switching",
                  meaning: "Makes matching sinks this accessory without a reporter; without audio-switching only the user chooses them."),
        ConfigKey(element: "accessory[].reporter", type: "string", defaultValue: "—", range: "reverse-DNS name",
                  meaning: "Only this reporter may register the accessory; others get invalid-request."),
    ]

    /// The declaration of `path` (`timing.on-delay-ms`, `rule[].priority`).
    public static func key(_ path: String) -> ConfigKey? { keys.first { $0.path == path } }

    public static func keys(inTable table: String) -> [ConfigKey] { keys.filter { $0.table == table } }

    /// Tables that hold keys (`timing`, `rule[]`…), in schema order.
    public static var tables: [String] {
        var seen: [String] = []
        for key in keys where !key.table.isEmpty && !seen.contains(key.table) { seen.append(key.table) }
        return seen
    }

    /// The `[weights]` table that `tier-order` replaced: refused with what to write instead.
    static let retiredWeights =
        "weights.* was replaced by tier-order: tiers compare in order, first difference wins (no weight can make a lower tier outweigh a higher one); remove [weights] and write tier-order = \(ConfigRenderer.list(RankTier.defaultOrder.map(\.rawValue))) at the top level, reordered if you need to (docs/policy.md §2)"

    /// The schema as a Markdown table, for docs/policy.md.
    public static var markdownTable: String {
        var lines = ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
        for key in keys {
            let cells = [key.path, key.type, key.defaultValue, key.range, key.meaning].map { $0.replacing("|", with: "\\|") }
            lines.append("| `\(cells[0])` | \(cells[1]) | `\(cells[2])` | \(cells[3]) | \(cells[4]) |")
        }
        return lines.joined(separator: "\n")
    }
}
