import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// What a request line must satisfy beyond being JSON, checked on its bytes before it is
/// decoded (Foundation's decoder keeps the last of duplicate keys, turns an integer outside 64
/// bits into a float and names no nesting limit):
/// - no object has a key twice;
/// - arrays and objects nest at most `maximumDepth` deep;
/// - every number in `id` reads back exactly as sent: an integer within 64 bits, or a number
///   whose shortest spelling is the one sent, so the reply echoes the id byte for byte.
/// A line that is not JSON at all passes here and is refused by the decoder, with its place.
struct ControlRequestCheck {
    static let maximumDepth = 32

    enum Problem: Error, Equatable {
        case duplicateKey(String)
        case tooDeep
        case idOutside64Bits(String)
        case idNotExact(sent: String, echoed: String)
        /// Not JSON: left to the decoder, which says where.
        case syntax

        /// Whether the id of the line cannot be echoed (it is what is wrong, or it is ambiguous).
        var spoilsID: Bool {
            switch self {
            case .duplicateKey(let key): key == "id"
            case .idOutside64Bits, .idNotExact, .tooDeep, .syntax: true
            }
        }

        var error: AccessoryError {
            switch self {
            case .duplicateKey(let key):
                AccessoryError(.invalidRequest, "duplicate key \"\(key)\": each key may appear once in a request (the daemon does not pick one)")
            case .tooDeep:
                AccessoryError(.invalidRequest, "nesting deeper than \(ControlRequestCheck.maximumDepth) levels (the nesting-depth limit of arrays and objects in a request): send a flat request such as {\"id\":1,\"op\":\"status\"}")
            case .idOutside64Bits(let text):
                AccessoryError(.invalidRequest, "id \(text) is an integer outside 64 bits and could not be echoed as sent: use an integer from \(Int64.min) to \(Int64.max), or a string")
            case .idNotExact(let sent, let echoed):
                AccessoryError(.invalidRequest, "id \(sent) could not be echoed as sent (it reads back as \(echoed)): write the number as \(echoed), or send a string")
            case .syntax:
                AccessoryError(.invalidRequest, "malformed JSON")
            }
        }
    }

    private let bytes: [UInt8]
    private var at = 0

    private init(_ line: Data) { bytes = Array(line) }

    /// The first problem of `line`, if any (`.syntax`: not JSON, for the decoder to explain).
    static func problem(in line: Data) -> Problem? {
        var check = ControlRequestCheck(line)
        do {
            try check.value(depth: 0, inID: false)
            check.skipSpace()
            return check.at == check.bytes.count ? nil : .syntax
        } catch {
            return error
        }
    }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Problem) {
        skipSpace()
        guard current == byte else { throw .syntax }
        at += 1
    }

    private mutating func value(depth: Int, inID: Bool) throws(Problem) {
        skipSpace()
        guard let byte = current else { throw .syntax }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw .tooDeep }
            at += 1
            var keys = Set<String>()
            skipSpace()
            if current == UInt8(ascii: "}") {
                at += 1
                return
            }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw .syntax }
                let key = try string()
                guard keys.insert(key).inserted else { throw .duplicateKey(key) }
                try expect(UInt8(ascii: ":"))
                try value(depth: depth + 1, inID: inID || (depth == 0 && key == "id"))
                skipSpace()
                guard let next = current else { throw .syntax }
                at += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { throw .syntax }
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw .tooDeep }
            at += 1
            skipSpace()
            if current == UInt8(ascii: "]") {
                at += 1
                return
            }
            while true {
                try value(depth: depth + 1, inID: inID)
                skipSpace()
                guard let next = current else { throw .syntax }
                at += 1
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { throw .syntax }
            }
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number(inID: inID)
        default:
            throw .syntax
        }
    }

    private mutating func literal(_ word: String) throws(Problem) {
        for byte in word.utf8 {
            guard current == byte else { throw .syntax }
            at += 1
        }
    }

    private mutating func number(inID: Bool) throws(Problem) {
        let start = at
        while let byte = current, byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        {
            at += 1
        }
        guard inID else { return }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            guard Int64(text) != nil else { throw .idOutside64Bits(text) }
            return
        }
        guard let number = Double(text) else { throw .syntax }
        let echoed = Int64(exactly: number).map(String.init) ?? JSONValue.number(number).canonicalText
        guard echoed == text else { throw .idNotExact(sent: text, echoed: echoed) }
    }

    /// The string at `at` (which is its opening quote), unescaped.
    private mutating func string() throws(Problem) -> String {
        at += 1
        var result = ""
        var plainStart = at
        while true {
            guard let byte = current else { throw .syntax }
            if byte == UInt8(ascii: "\"") {
                result += String(decoding: bytes[plainStart..<at], as: UTF8.self)
                at += 1
                return result
            }
            if byte < 0x20 { throw .syntax }
            guard byte == UInt8(ascii: "\\") else {
                at += 1
                continue
            }
            result += String(decoding: bytes[plainStart..<at], as: UTF8.self)
            at += 1
            guard let escape = current else { throw .syntax }
            at += 1
            switch escape {
            case UInt8(ascii: "\""): result += "\""
            case UInt8(ascii: "\\"): result += "\\"
            case UInt8(ascii: "/"): result += "/"
            case UInt8(ascii: "b"): result += "\u{8}"
            case UInt8(ascii: "f"): result += "\u{C}"
            case UInt8(ascii: "n"): result += "\n"
            case UInt8(ascii: "r"): result += "\r"
            case UInt8(ascii: "t"): result += "\t"
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), current == UInt8(ascii: "\\"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "u") {
                    at += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw .syntax }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                result.unicodeScalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default:
                throw .syntax
            }
            plainStart = at
        }
    }

    private mutating func hex4() throws(Problem) -> UInt32 {
        guard at + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16) else { throw .syntax }
        at += 4
        return value
    }
}
