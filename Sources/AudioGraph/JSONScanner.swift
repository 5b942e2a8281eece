import FoundationEssentials

/// A byte-level JSON reader for `pw-dump` files of any size: one pass over the bytes, no
/// Foundation decoder and no tree of the whole file. `PwDumpDecoder` reads the top-level array
/// one object at a time, turns it into a graph change and drops it, and skips the parts of each
/// object's `info.params` routing does not read (formats, profiles' lists, props: most of a
/// dump's bytes) without building them.
struct JSONScanner {
    struct Failure: Error {
        /// The byte where the text stops being JSON.
        var offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, not consumed.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < bytes.count ? bytes[offset] : nil
    }

    /// Steps over the byte `peek()` just returned.
    mutating func consume() { offset += 1 }

    mutating func consume(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw Failure(offset: offset) }
        offset += 1
    }

    /// Reads the elements of an array, calling `body` with the scanner placed at each.
    mutating func forEachElement(_ body: (inout JSONScanner) throws(Failure) -> Void) throws(Failure) {
        try consume(UInt8(ascii: "["))
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try body(&self)
            switch peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return
            default: throw Failure(offset: offset)
            }
        }
    }

    /// Which parts of a value to build: everything, or an object's named fields (each with its
    /// own pick) and either all or none of the others. Skipped fields read as null, checked as
    /// JSON all the same.
    indirect enum Pick: Sendable {
        case all
        case fields([String: Pick], others: Bool)
        /// An array whose every element is picked so.
        case elements(Pick)
        /// Read by a reader of its own instead of built (a device's routes: `RouteDecoder`),
        /// in the same pass; what it read is kept in `captured` under this name and the field
        /// reads as null.
        case read(String, @Sendable (inout JSONScanner) throws(Failure) -> Captured)
    }

    /// What a `.read` pick's reader made of its value.
    enum Captured: Sendable {
        case routes([RouteDecoder.Entry])
        /// A route list that is neither an array nor null.
        case notRoutes
        case profile(Int?)
        /// A node's `Props` list: what it said of `mute` (`PropsDecoder`).
        case props(PropsDecoder.Reading)
    }

    /// The values read by `.read` picks, by name, since the last reset.
    var captured: [String: Captured] = [:]

    /// One value, building only what `pick` asks for.
    mutating func value(_ pick: Pick = .all, depth: Int = 0) throws(Failure) -> JSONValue {
        guard let byte = peek(), depth < Self.maximumDepth else { throw Failure(offset: offset) }
        switch byte {
        case UInt8(ascii: "{"):
            offset += 1
            var fields: [String: JSONValue] = [:]
            if peek() == UInt8(ascii: "}") {
                offset += 1
                return .object(fields)
            }
            while true {
                guard peek() == UInt8(ascii: "\"") else { throw Failure(offset: offset) }
                let key = try string()
                try consume(UInt8(ascii: ":"))
                switch pick {
                case .all, .elements, .read:
                    fields[key] = try value(depth: depth + 1)
                case .fields(let named, let others):
                    if case .read(let name, let reader)? = named[key] {
                        captured[name] = try reader(&self)
                        fields[key] = .null
                    } else if let inner = named[key] {
                        fields[key] = try value(inner, depth: depth + 1)
                    } else if others {
                        fields[key] = try value(depth: depth + 1)
                    } else {
                        try skipValue(depth: depth + 1)
                        fields[key] = .null
                    }
                }
                switch peek() {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "}"):
                    offset += 1
                    return .object(fields)
                default: throw Failure(offset: offset)
                }
            }
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            let inner: Pick = if case .elements(let each) = pick { each } else { .all }
            try forEachElement { (scanner: inout JSONScanner) throws(Failure) in items.append(try scanner.value(inner, depth: depth + 1)) }
            return .array(items)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return try number()
        }
    }

    /// Steps over one value without building it, checking it is JSON all the same.
    mutating func skipValue(depth: Int = 0) throws(Failure) {
        guard let byte = peek(), depth < Self.maximumDepth else { throw Failure(offset: offset) }
        switch byte {
        case UInt8(ascii: "{"):
            offset += 1
            if peek() == UInt8(ascii: "}") {
                offset += 1
                return
            }
            while true {
                guard peek() == UInt8(ascii: "\"") else { throw Failure(offset: offset) }
                try skipString()
                try consume(UInt8(ascii: ":"))
                try skipValue(depth: depth + 1)
                switch peek() {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "}"):
                    offset += 1
                    return
                default: throw Failure(offset: offset)
                }
            }
        case UInt8(ascii: "["):
            offset += 1
            if peek() == UInt8(ascii: "]") {
                offset += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                switch peek() {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "]"):
                    offset += 1
                    return
                default: throw Failure(offset: offset)
                }
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default:
            let start = offset
            while offset < bytes.count, Self.isNumberByte(bytes[offset]) { offset += 1 }
            guard offset > start else { throw Failure(offset: start) }
        }
    }

    /// Deeper nesting than any pw-dump has is refused rather than recursed into.
    static let maximumDepth = 256

    private mutating func skipString() throws(Failure) {
        offset += 1
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                offset += 1
                return
            case UInt8(ascii: "\\"): offset += 2
            case 0..<0x20: throw Failure(offset: offset)
            default: offset += 1
            }
        }
        throw Failure(offset: offset)
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw Failure(offset: offset) }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] {
            throw Failure(offset: offset + index)
        }
        offset += count
    }

    mutating func number() throws(Failure) -> JSONValue {
        let start = offset
        var isInteger = true
        while offset < bytes.count, Self.isNumberByte(bytes[offset]) {
            switch bytes[offset] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): isInteger = false
            default: break
            }
            offset += 1
        }
        guard offset > start else { throw Failure(offset: start) }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else { throw Failure(offset: start) }
        return .number(number)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): true
        default: false
        }
    }

    /// A string starting at the opening quote; escapes decoded (\uXXXX with surrogate pairs).
    mutating func string() throws(Failure) -> String {
        offset += 1
        let start = offset
        // Fast path: no escapes, one slice.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw Failure(offset: offset) }
            offset += 1
        }
        var decoded = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset + 1 < bytes.count else { throw Failure(offset: offset) }
                let escape = bytes[offset + 1]
                offset += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), offset + 1 < bytes.count,
                        bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
                    {
                        offset += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                    }
                    decoded.append(contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
                default: throw Failure(offset: offset - 1)
                }
            default:
                if byte < 0x20 { throw Failure(offset: offset) }
                decoded.append(byte)
                offset += 1
            }
        }
        throw Failure(offset: offset)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw Failure(offset: offset) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw Failure(offset: offset)
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    /// `line L, column C` of a byte offset (columns count bytes, as JSONSyntaxLocation's do).
    static func location(of offset: Int, in bytes: UnsafeRawBufferPointer) -> String {
        let end = min(offset, bytes.count)
        var line = 1, lineStart = 0
        for index in 0..<end where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(end - lineStart + 1)"
    }
}
