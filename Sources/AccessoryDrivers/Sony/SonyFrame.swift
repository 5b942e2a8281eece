/// One Sony MDR frame, unstuffed. On the wire it is
/// `3E type seq length(u32, big endian) payload checksum 3C`, where every 3C, 3D or 3E between
/// the markers travels as `3D (byte & EF)`, and the checksum is the low byte of the sum of the
/// unstuffed type, sequence, length and payload bytes (omarchy-headphones `PROTOCOL.md`,
/// Gadgetbridge `Message.java`).
struct SonyFrame: Sendable, Hashable {
    /// The frame types public notes name.
    enum Kind: UInt8, Sendable {
        case ack = 0x01
        case table1 = 0x0C
        case table2 = 0x0E
    }

    var type: UInt8
    var seq: UInt8
    var payload: [UInt8]

    static let startMarker: UInt8 = 0x3E
    static let endMarker: UInt8 = 0x3C
    static let escape: UInt8 = 0x3D
    /// What an escaped byte becomes on the wire (`b & EF`); read back with `| 10`.
    static let escapedForms: Set<UInt8> = [0x2C, 0x2D, 0x2E]

    var kind: Kind? { Kind(rawValue: type) }

    /// The low byte of the sum of `bytes` (type, sequence, length and payload, unstuffed).
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0) { $0 &+ $1 }
    }

    /// The frame as it travels: header, payload and checksum stuffed, between the markers.
    static func encode(type: UInt8, seq: UInt8, payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        var body: [UInt8] = [type, seq, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        body += payload
        body.append(checksum(body))
        var wire: [UInt8] = [startMarker]
        for byte in body {
            if byte == startMarker || byte == endMarker || byte == escape {
                wire += [escape, byte & 0xEF]
            } else {
                wire.append(byte)
            }
        }
        wire.append(endMarker)
        return wire
    }

    static func encode(_ kind: Kind, seq: UInt8, payload: [UInt8]) -> [UInt8] {
        encode(type: kind.rawValue, seq: seq, payload: payload)
    }

    /// The ACK of a data frame: the other sequence number, no payload.
    static func ack(of seq: UInt8) -> [UInt8] {
        encode(.ack, seq: otherSeq(seq), payload: [])
    }

    /// MDR alternates 0 and 1; any other value is answered as 1 would be.
    static func otherSeq(_ seq: UInt8) -> UInt8 { seq == 0 ? 1 : 0 }
}
