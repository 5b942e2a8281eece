import RoutingPolicy

/// What one packet (AAP) or one frame (Galaxy Buds, Sony) says on its own, field by field, for tools
/// that show a capture (`earshot driver decode`). Decoding is stateless: no change filter, no
/// counters, no notes. The sessions keep their own semantics; the decoders share their
/// constants and, for Galaxy Buds and Sony, their frame reader and message layouts.
public enum DecodedPacket: Sendable, Hashable {
    /// Wear state of both buds, in the protocol's order (AAP: primary, secondary; Galaxy Buds:
    /// left, right). A Galaxy Buds status message also carries batteries: `components`.
    case earDetection(BudPair, components: [BatteryComponent])
    /// An AAP or Sony battery message, one entry per component it lists (unknown kinds and
    /// parts reported absent left out).
    case battery([BatteryComponent])
    /// An AAP audio-source notification.
    case audioSource(AudioSource)
    /// A Sony wear status: the placement it gives (nil when it says nothing usable), and each
    /// side, left first, where the message names sides (earbuds; table-2 codes of headphones).
    case wear(placement: Placement?, sides: BudPair?)
    /// A Sony ACK, with its sequence number.
    case ack(seq: UInt8)
    /// A Sony handshake reply: the protocol version (1 or 2) it tells.
    case protocolInfo(version: Int)
    /// A Sony support-function list: the table (1 or 2) and the function ids.
    case supportFunctions(table: Int, functions: [UInt8])
    /// Well formed and known, but carrying nothing Earshot reads (`opcode` nil for a packet
    /// without the message header, such as the handshake's reply; a Galaxy Buds fragment).
    case ignored(opcode: UInt16?)
    /// Well formed, with an opcode (AAP) or message id (Galaxy Buds) this layer does not decode.
    case unknown(opcode: UInt16)
    /// Dropped: too short, too long, bad framing or CRC; `why` says which.
    case malformed(why: String)
}

/// One battery of a headset as one message reported it.
public struct BatteryComponent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        case left
        case right
        case chargingCase = "case"
        /// One battery for the whole headset (AirPods Max, Sony headphones).
        case headphone
    }

    public enum Status: String, Sendable, Hashable, CaseIterable, Codable {
        case charging
        case discharging
        case disconnected
        /// Not said, or a value no public note explains (Galaxy Buds never say).
        case unknown
    }

    public var kind: Kind
    /// 0...100; nil when the headset marks it absent (0xFF) or sends an impossible value.
    public var level: Int?
    public var status: Status

    public init(kind: Kind, level: Int?, status: Status) {
        self.kind = kind
        self.level = level
        self.status = status
    }
}
