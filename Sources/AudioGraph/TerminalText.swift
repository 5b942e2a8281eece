/// Text other programs chose (node names and descriptions, port labels, accessory and reporter
/// names, messages built of them) made safe to print on a terminal or to write as a log line.
/// Any PipeWire client can name a node with ESC, OSC or a line break: printed raw, such a name
/// could set the terminal's title, recolour or hide what follows, or forge a line of the log.
///
/// The one place this is decided: `earshot graph`, `status`, `watch`, `eval` and `accessory`
/// text, the CLI's refusals and warnings, `earshot report`'s messages and every line of the
/// daemon's log go through `escape` (JSON output does not: its encoder escapes already).
public enum TerminalText {
    /// `text` with each character that a terminal or a log reader would act on written as
    /// `\u{XX}` (hex, at least two digits): C0 controls (U+0000–U+001F, tab, line feed and
    /// carriage return included: the result is one line), DEL (U+007F), C1 controls
    /// (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and the bidi
    /// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what
    /// follows them. Everything else is kept as it is, backslashes too, so escaping twice
    /// changes nothing; text with nothing to escape comes back unchanged after one pass over its
    /// UTF-8 bytes.
    public static func escape(_ text: some StringProtocol) -> String {
        guard needsEscaping(text) else { return String(text) }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isEscaped(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Lines for a terminal: each escaped on its own (a line break inside one is escaped, so
    /// the line feeds between them are the only ones), joined by line feeds.
    public static func lines(_ lines: some Sequence<String>) -> String {
        lines.map { escape($0) }.joined(separator: "\n")
    }

    /// Whether `scalar` is written as an escape.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether any character of `text` is escaped, read from its UTF-8 bytes: a byte below
    /// 0x20, 0x7F, C2 80–C2 9F (U+0080–U+009F), E2 80 A8–E2 80 AE (U+2028–U+202E) or
    /// E2 81 A6–E2 81 A9 (U+2066–U+2069). Decision lines carry `→` and `·`: this keeps them
    /// off the slow path.
    public static func needsEscaping(_ text: some StringProtocol) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(Array(text.utf8))
    }

    private static func scan(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if byte < 0x20 || byte == 0x7F { return true }
            guard byte == 0xC2 || byte == 0xE2, index != bytes.endIndex else { continue }
            let second = bytes[index]
            if byte == 0xC2 {
                if (0x80...0x9F).contains(second) { return true }
                continue
            }
            let next = bytes.index(after: index)
            guard next != bytes.endIndex else { continue }
            let third = bytes[next]
            if second == 0x80, (0xA8...0xAE).contains(third) { return true }
            if second == 0x81, (0xA6...0xA9).contains(third) { return true }
        }
        return false
    }
}
