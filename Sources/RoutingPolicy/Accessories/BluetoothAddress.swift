/// A 6-byte Bluetooth device address, written `AA:BB:CC:DD:EE:FF` and parsed case-insensitively.
/// Stored as one integer so sink scoring can compare and hash it without allocating.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48 address bits, first byte most significant.
    public let bits: UInt64

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 6, "a Bluetooth address has 6 bytes")
        bits = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (any letter case); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else { return nil }
        var value: UInt64 = 0
        for group in 0..<6 {
            let at = group * 3
            if group > 0, utf8[at - 1] != UInt8(ascii: ":") { return nil }
            guard let high = Self.nibble(utf8[at]), let low = Self.nibble(utf8[at + 1]) else { return nil }
            value = value << 8 | UInt64(high << 4 | low)
        }
        bits = value
    }

    /// The forms people paste for an accessory: `AA:BB:CC:DD:EE:FF`, `AA-BB-CC-DD-EE-FF` (dashes,
    /// as Windows and some tools print it) and `AABBCCDDEEFF` (bare hex), any letter case; nil
    /// for anything else. Normalised like every address (`AA:BB:CC:DD:EE:FF`).
    public static func anyForm(_ text: some StringProtocol) -> BluetoothAddress? {
        let utf8 = Array(text.utf8)
        if utf8.count == 17, utf8.contains(UInt8(ascii: "-")), !utf8.contains(UInt8(ascii: ":")) {
            return BluetoothAddress(String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: ":") : $0 }, as: UTF8.self))
        }
        guard utf8.count == 12 else { return BluetoothAddress(text) }
        var value: UInt64 = 0
        for c in utf8 {
            guard let digit = nibble(c) else { return nil }
            value = value << 4 | UInt64(digit)
        }
        return BluetoothAddress(bytes: (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * (5 - $0))) })
    }

    public var bytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: bits >> (8 * (5 - $0))) } }

    public var description: String {
        bytes.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined(separator: ":")
    }

    public static func < (a: BluetoothAddress, b: BluetoothAddress) -> Bool { a.bits < b.bits }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
