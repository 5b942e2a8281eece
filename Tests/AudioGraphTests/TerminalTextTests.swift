import AudioGraph
import Foundation
import Testing

/// `TerminalText.escape`: names any PipeWire client chose, made safe for a terminal and a log.
@Suite("TerminalText")
struct TerminalTextTests {
    @Test("C0 controls (tab, line feed, carriage return too), DEL and C1 are written as \\u{XX}")
    func controls() {
        #expect(TerminalText.escape("a\u{1B}]0;pwned\u{07}b") == #"a\u{1B}]0;pwned\u{07}b"#)
        #expect(TerminalText.escape("line\nforged\r\tx") == #"line\u{0A}forged\u{0D}\u{09}x"#)
        #expect(TerminalText.escape("\u{00}\u{1F}\u{7F}") == #"\u{00}\u{1F}\u{7F}"#)
        #expect(TerminalText.escape("csi\u{9B}31m nel\u{85} \u{80}") == #"csi\u{9B}31m nel\u{85} \u{80}"#)
    }

    @Test("bidi embeddings, overrides and isolates, and the line and paragraph separators, are escaped")
    func bidiAndSeparators() {
        #expect(TerminalText.escape("a\u{202E}b\u{202A}\u{202B}\u{202C}\u{202D}") == #"a\u{202E}b\u{202A}\u{202B}\u{202C}\u{202D}"#)
        #expect(TerminalText.escape("\u{2066}x\u{2067}\u{2068}\u{2069}") == #"\u{2066}x\u{2067}\u{2068}\u{2069}"#)
        #expect(TerminalText.escape("p\u{2028}q\u{2029}") == #"p\u{2028}q\u{2029}"#)
    }

    @Test("everything else is kept: accents, arrows, middle dots, emoji, CJK, backslashes, the marks next to the escaped ranges")
    func keeps() {
        let kept = [
            "alsa_output.pci-0000_00_1f.3.analog-stereo", "Écouteurs de Zoë £5 ©", "winner: a → b · class-order (9 of 9) — ✗",
            "🎧 耳机", #"C:\path\u{1B}"#, "\u{A0}nbsp \u{A0}", "\u{2027}\u{202F}\u{2065}\u{206A} \u{200E}", "",
        ]
        for text in kept {
            #expect(TerminalText.escape(text) == text, "\(text.debugDescription)")
            #expect(!TerminalText.needsEscaping(text))
        }
    }

    @Test("escaping twice changes nothing, and the result holds no character that would be escaped")
    func idempotent() {
        let hostile = "a\u{1B}[2J\u{07}\n\r\t\u{7F}\u{9B}\u{202E}\u{2066}z"
        let once = TerminalText.escape(hostile)
        #expect(TerminalText.escape(once) == once)
        #expect(!once.unicodeScalars.contains(where: TerminalText.isEscaped))
        #expect(!TerminalText.needsEscaping(once))
        #expect(TerminalText.needsEscaping(hostile))
    }

    @Test("a substring, and every single scalar from U+0000 to U+2100, is escaped exactly when isEscaped says")
    func everyScalar() {
        for value in UInt32(0)...0x2100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "x" + String(Character(scalar)) + "y"
            let escaped = TerminalText.escape(text[...])
            #expect(TerminalText.needsEscaping(text) == TerminalText.isEscaped(scalar), "U+\(String(value, radix: 16))")
            #expect((escaped != text) == TerminalText.isEscaped(scalar), "U+\(String(value, radix: 16))")
        }
    }

    @Test("lines: each line escaped on its own, joined by the only line feeds")
    func lines() {
        let text = TerminalText.lines(["first \u{1B}[31m", "second\nforged"])
        #expect(text == #"first \u{1B}[31m"# + "\n" + #"second\u{0A}forged"#)
        #expect(text.split(separator: "\n").count == 2)
    }
}
