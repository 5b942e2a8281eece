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
    public static func escape(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
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

    /// `escape` of a substring (or any other string type).
    public static func escape(_ text: some StringProtocol) -> String {
        escape(String(text))
    }

    /// Lines for a terminal: each escaped on its own (a line break inside one is escaped, so
    /// the line feeds between them are the only ones), joined by line feeds.
    public static func lines(_ lines: [String]) -> String {
        var text = ""
        for (index, line) in lines.enumerated() {
            if index > 0 { text += "\n" }
            text += escape(line)
        }
        return text
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
    public static func needsEscaping(_ text: String) -> Bool {
        if let found = text.utf8.withContiguousStorageIfAvailable(scan) { return found }
        var copy = text
        return copy.withUTF8(scan)
    }

    /// Concrete (not generic) so that it is fast when called from other modules.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let byte = bytes[index]
            index += 1
            if byte < 0x20 || byte == 0x7F { return true }
            if byte == 0xC2 {
                if index < count, (0x80...0x9F).contains(bytes[index]) { return true }
            } else if byte == 0xE2, index + 1 < count {
                let second = bytes[index]
                let third = bytes[index + 1]
                if second == 0x80, (0xA8...0xAE).contains(third) { return true }
                if second == 0x81, (0xA6...0xA9).contains(third) { return true }
            }
        }
        return false
    }
}
