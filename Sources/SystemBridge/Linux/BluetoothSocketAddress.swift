/// A Bluetooth device address (BD_ADDR) as a socket needs it, parsed strictly from BlueZ's
/// text form `AA:BB:CC:DD:EE:FF`: six two-digit hex bytes, colon-separated, nothing else. (The
/// policy's `RoutingPolicy.BluetoothAddress` is the same address for matching; this one only
/// feeds `sockaddr_l2`/`sockaddr_rc`, which SystemBridge cannot take from a module above it.)
public struct BluetoothSocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The six bytes in text order (most significant first, as `description` prints them).
    public let bytes: [UInt8]

    /// Parses `text`; refuses anything that is not exactly six colon-separated hex pairs
    /// (either case), e.g. `AA-BB-…`, `AABBCCDDEEFF`, a BlueZ object path or surrounding spaces.
    public init(_ text: String) throws(BluetoothError) {
        let characters = Array(text.utf8)
        var bytes: [UInt8] = []
        if characters.count == 17 {
            for index in 0..<6 {
                let start = index * 3
                if index > 0, characters[start - 1] != UInt8(ascii: ":") { break }
                guard let high = Self.hexDigit(characters[start]), let low = Self.hexDigit(characters[start + 1]) else { break }
                bytes.append(high << 4 | low)
            }
        }
        guard bytes.count == 6 else { throw .invalidAddress(text) }
        self.bytes = bytes
    }

    /// The bytes as the kernel's `bdaddr_t` stores them: little-endian, the reverse of the text.
    public var kernelBytes: [UInt8] { bytes.reversed() }

    /// `AA:BB:CC:DD:EE:FF`, upper-case as BlueZ prints it.
    public var description: String {
        bytes.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined(separator: ":")
    }

    private static func hexDigit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
