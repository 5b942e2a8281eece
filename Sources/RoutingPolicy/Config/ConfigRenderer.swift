import FoundationEssentials

/// Writes a config back as TOML: every key, each with its meaning as a comment. With the
/// built-in defaults this is the shipped config/earshot.toml; with a loaded file it is what
/// `earshot config show --effective` prints.
public enum ConfigRenderer {
    public static func toml(_ config: PolicyConfig) -> String {
        var out: [String] = [
            "# Earshot configuration. Every key is shown with its value; lines starting with # are comments.",
            "# Search order: --config FILE, $XDG_CONFIG_HOME/earshot/earshot.toml, /etc/earshot/earshot.toml, built-in defaults.",
            "# Check a file with: earshot config check FILE",
            "",
        ]
        // Every key PolicyConfig holds, table by table, in schema order.
        for table in [""] + ConfigSchema.tables where !table.hasSuffix("[]") {
            if !table.isEmpty { out += ["", "[\(table)]"] }
            for schema in ConfigSchema.keys(inTable: table) {
                guard let field = schema.field else { continue }
                out.append("# \(schema.meaning) (\(schema.type); \(schema.range); default \(schema.defaultValue))")
                if let fallback = field.fallback, !fallback.isSet(config) {
                    // Left out: the value it takes, commented, so the file reads back the same.
                    out.append("# not set: \(fallback.name), which is")
                    out.append("# \(schema.name) = \(field.render(config))")
                } else {
                    out.append("\(schema.name) = \(field.render(config))")
                }
            }
        }
        out.append("")
        if config.rules.isEmpty {
            out += commentedExample(table: "rule[]", header: "[[rule]]", values: [
                "match": #"{ "node.name" = "alsa_output.*hdmi*" }"#, "priority": "-10", "ignore": "false",
            ])
        }
        for rule in config.rules {
            out.append("[[rule]]")
            out.append("match = " + (rule.alternatives.count == 1
                ? inlineTable(rule.alternatives[0]) : "[" + rule.alternatives.map(inlineTable).joined(separator: ", ") + "]"))
            switch rule.action {
            case .ignore: out.append("ignore = true")
            case .priority(let value): out.append("priority = \(value)")
            }
            out.append("")
        }
        if config.accessories.isEmpty {
            out += commentedExample(table: "accessory[]", header: "[[accessory]]", values: [
                "address": #""AA:BB:CC:DD:EE:FF""#, "name": #""bluez_output.*""#, "vendor-id": #""bluetooth:004c""#,
                "product-id": #""0x200e""#, "bus": #""bluetooth""#, "form-factor": #""headphone""#,
                "match": #"{ "api.bluez5.profile" = "a2dp-sink" }"#, "capabilities": #"["audio-switching"]"#,
                "reporter": #""org.example.airpods-reporter""#,
            ])
        }
        for entry in config.accessories {
            out.append("[[accessory]]")
            if let address = entry.address { out.append("address = \(quoted(address.description))") }
            if let name = entry.name { out.append("name = \(quoted(name.pattern))") }
            if let value = entry.vendorID { out.append("vendor-id = \(quoted(value))") }
            if let value = entry.productID { out.append("product-id = \(quoted(value))") }
            if let value = entry.bus { out.append("bus = \(quoted(value))") }
            if let value = entry.formFactor { out.append("form-factor = \(quoted(value))") }
            if !entry.properties.isEmpty { out.append("match = \(inlineTable(entry.properties))") }
            if let capabilities = entry.capabilities { out.append("capabilities = \(list(capabilities.names))") }
            if let reporter = entry.reporter { out.append("reporter = \(quoted(reporter))") }
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// A commented-out table showing every key of an array of tables.
    private static func commentedExample(table: String, header: String, values: [String: String]) -> [String] {
        var out = ["# \(header) (none by default; an example:)", "# \(header)"]
        for schema in ConfigSchema.keys(inTable: table) {
            out.append("#   \(schema.meaning) (\(schema.type); \(schema.range))")
            out.append("#   \(schema.name) = \(values[schema.name] ?? schema.defaultValue)")
        }
        out.append("")
        return out
    }

    /// TOML basic strings share JSON's escapes.
    static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(text) else { return "\"\"" }
        return String(decoding: data, as: UTF8.self)
    }

    static func list(_ items: [String]) -> String { "[" + items.map(quoted).joined(separator: ", ") + "]" }

    static func inlineTable(_ matches: [PropertyMatch]) -> String {
        "{ " + matches.map { "\(quoted($0.key)) = \($0.pattern.toml)" }.joined(separator: ", ") + " }"
    }
}
