/// The `{"name": …}` JSON values of the `default.*` metadata keys, read and written on every
/// graph event: a hand-written fast path for the plain spelling, Foundation for anything else
/// (spaces, escapes, more fields), so the result is always what a full JSON parse gives.
enum DefaultNameJSON {
    /// The name in `text`, if it is exactly `{"name":"…"}` with no escapes; nil otherwise
    /// (the caller then parses it in full).
    static func fastName(_ text: String) -> String? {
        var utf8 = text.utf8[...]
        let prefix = #"{"name":""#.utf8
        guard utf8.starts(with: prefix) else { return nil }
        utf8 = utf8.dropFirst(prefix.count)
        guard utf8.last == UInt8(ascii: "}") else { return nil }
        utf8 = utf8.dropLast()
        guard utf8.last == UInt8(ascii: "\""), let end = utf8.indices.last else { return nil }
        let name = utf8[utf8.startIndex..<end]
        guard !name.contains(where: needsEscape) else { return nil }
        return String(Substring(name))
    }

    /// `{"name":"…"}`, as JSONValue's canonical text spells it, when `name` needs no escapes.
    static func fastText(_ name: String) -> String? {
        name.utf8.contains(where: needsEscape) ? nil : #"{"name":"\#(name)"}"#
    }

    /// Quotes, backslashes and control characters: anything JSON would escape.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
    }
}
