/// earshot.toml(5): the config schema as a roff manual page (`earshot config show --schema
/// --format man`), generated from the same declarations as the Markdown table, so the page the
/// Debian package installs cannot drift from what the loader accepts.
public enum ConfigManualPage {
    /// The page. `version` goes in the footer (`earshot 0.2.0`), `date` (YYYY-MM-DD, or empty)
    /// in the centre of it.
    public static func render(version: String, date: String) -> String {
        var lines = [
            ".TH EARSHOT.TOML 5 \(quoted(date)) \(quoted("earshot \(version)")) \"Earshot Manual\"",
            ".SH NAME",
            "earshot.toml \\- configuration file of the Earshot audio routing daemon",
            ".SH SYNOPSIS",
            ".I $XDG_CONFIG_HOME/earshot/earshot.toml",
            ".br",
            ".I /etc/earshot/earshot.toml",
            ".SH DESCRIPTION",
            "The policy of",
            ".BR earshot (1)",
            "\\(em which sink takes the output, when, and what happens to the players \\(em is set in a TOML file.",
            "The daemon and",
            ".B earshot config",
            "read the file named by",
            ".BR \\-\\-config ,",
            "else the user's",
            ".IR $XDG_CONFIG_HOME/earshot/earshot.toml",
            "(\\fI~/.config/earshot/earshot.toml\\fR when the variable is unset),",
            "else the system-wide",
            ".IR /etc/earshot/earshot.toml ,",
            "else the built-in defaults; the first file found is the only one read.",
            ".PP",
            "The daemon reloads the file on SIGHUP",
            "(\\fBsystemctl \\-\\-user reload earshot\\fR)",
            "and when it changes. An invalid file is reported with file:line:column and the last good configuration stays in force;",
            ".B earshot config check",
            "checks a file without a daemon, and",
            ".B earshot config show \\-\\-effective",
            "prints every key with the value in force.",
            ".PP",
            "Every key is optional. Each is listed below with its type, default and allowed values.",
            ".SH KEYS",
        ]
        for table in [""] + ConfigSchema.tables {
            lines.append(".SS \(escape(heading(table)))")
            for key in ConfigSchema.keys(inTable: table) {
                lines.append(".TP")
                lines.append(".B \(escape(key.name))")
                lines.append("\(escape(key.type)); default \\fB\(escape(key.defaultValue))\\fR; \(escape(key.range)).")
                lines.append(".br")
                lines.append(escape(key.meaning))
            }
        }
        lines += [
            ".SH FILES",
            ".TP",
            ".I $XDG_CONFIG_HOME/earshot/earshot.toml",
            "The user's configuration; it wins over the system-wide file.",
            ".TP",
            ".I /etc/earshot/earshot.toml",
            "The system-wide configuration (the Debian package installs the defaults there).",
            ".SH SEE ALSO",
            ".BR earshot (1),",
            ".BR earshot\\-config (1),",
            ".BR earshot\\-daemon (1),",
            ".BR earshot\\-control (7)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `[timing]`, `[[rule]]`, or "Top level".
    static func heading(_ table: String) -> String {
        if table.isEmpty { return "Top level" }
        if table.hasSuffix("[]") { return "[[\(table.dropLast(2))]]" }
        return "[\(table)]"
    }

    /// Text safe on a roff line: backslashes kept as text, hyphens as hyphens (not minus signs
    /// in option names), and no line starting with a control character.
    static func escape(_ text: String) -> String {
        var escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    static func quoted(_ text: String) -> String {
        "\"\(escape(text).replacing("\"", with: "\\(dq"))\""
    }
}
