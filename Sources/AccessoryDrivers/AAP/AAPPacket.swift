import RoutingPolicy

/// AAP packet layouts (Apple's accessory protocol on L2CAP PSM 0x1001), from the public notes
/// cited in docs/drivers.md. Builders serve the session's own requests and tests / stand-in
/// devices, so nobody hand-types a packet.
public enum AAPPacket {
    /// The L2CAP PSM the headset listens on (SEQPACKET: one read is one packet).
    public static let psm: UInt16 = 0x1001

    /// Every message after the handshake starts with these four bytes, then a 2-byte opcode.
    public static let messageHeader: [UInt8] = [0x04, 0x00, 0x04, 0x00]

    /// Opcodes (byte 4, byte 5 is 0x00) this layer reads or deliberately passes over.
    public enum Opcode {
        public static let battery: UInt16 = 0x04
        public static let earDetection: UInt16 = 0x06
        public static let audioSource: UInt16 = 0x0E
        public static let requestNotifications: UInt16 = 0x0F
        /// Known messages that carry nothing Earshot uses, by the name the public notes give
        /// (LibrePods' AAP definitions, tyalie's notes); 0x0C, 0x2B and 0x4F are listed there
        /// without a meaning.
        public static let knownButUnusedNames: [UInt16: String] = [
            0x02: "capabilities", 0x08: "role", 0x09: "control settings", 0x0C: "unexplained (0x0C)", 0x11: "smart-routing reply",
            0x17: "head tracking", 0x19: "stem press", 0x1D: "device information", 0x2B: "unexplained (0x2B)",
            0x2E: "connected devices", 0x31: "proximity keys", 0x4B: "conversation awareness", 0x4F: "unexplained (0x4F)", 0x53: "EQ",
        ]
        public static let knownButUnused: Set<UInt16> = Set(knownButUnusedNames.keys)
        /// Sets the feature flags (listening-mode features); acknowledged with the same opcode.
        public static let setFeatures: UInt16 = 0x4D
    }

    /// Opens the session; without it the headset answers nothing.
    public static let handshake: [UInt8] = [0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x02, 0x00] + [UInt8](repeating: 0, count: 8)

    /// Asks for every notification (ear detection, battery, ...).
    public static let requestNotifications: [UInt8] = message(opcode: Opcode.requestNotifications, body: [0xFF, 0xFF, 0xFF, 0xFF])

    /// The feature flags the public clients send between the handshake and the notification
    /// request (`04 00 04 00 4D 00 FF 00 …`); the headset acknowledges it with opcode 0x4D.
    public static let setFeatures: [UInt8] = message(opcode: Opcode.setFeatures, body: [0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])

    /// A message packet: header, opcode (little-endian), body.
    public static func message(opcode: UInt16, body: [UInt8]) -> [UInt8] {
        messageHeader + [UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + body
    }

    /// The ear-detection byte values.
    public enum EarCode: UInt8, Sendable, CaseIterable {
        case inEar = 0x00
        case outOfEar = 0x01
        case inCase = 0x02
        /// The bud is not connected to the headset (librepods-rust: disconnected; MagicPodsCore:
        /// in the closed case): not in an ear.
        case disconnected = 0x03

        var budState: BudState {
            switch self {
            case .inEar: .inEar
            case .outOfEar: .outOfEar
            case .inCase: .inCase
            case .disconnected: .disconnected
            }
        }
    }

    /// An ear-detection notification with raw bytes (primary bud first).
    public static func earDetection(primary: UInt8, secondary: UInt8) -> [UInt8] {
        message(opcode: Opcode.earDetection, body: [primary, secondary])
    }

    public static func earDetection(primary: EarCode, secondary: EarCode) -> [UInt8] {
        earDetection(primary: primary.rawValue, secondary: secondary.rawValue)
    }

    /// Battery component kinds.
    public enum BatteryKind: UInt8, Sendable, CaseIterable {
        case headset = 0x01
        case right = 0x02
        case left = 0x04
        case chargingCase = 0x08
    }

    /// Battery status byte values.
    public enum BatteryStatus: UInt8, Sendable, CaseIterable {
        case unknown = 0x00
        case charging = 0x01
        case discharging = 0x02
        case disconnected = 0x04
        /// A bud charging inside its case.
        case chargingInCase = 0x05
    }

    /// One entry of a battery notification, raw bytes so tests can send odd values too.
    public struct BatteryEntry: Sendable, Hashable {
        public var kind: UInt8
        public var level: UInt8
        public var status: UInt8

        public init(kind: UInt8, level: UInt8, status: UInt8) {
            self.kind = kind
            self.level = level
            self.status = status
        }

        public init(_ kind: BatteryKind, level: UInt8, _ status: BatteryStatus) {
            self.init(kind: kind.rawValue, level: level, status: status.rawValue)
        }
    }

    /// A battery notification: count, then per entry kind, 0x01, level, status, 0x01.
    public static func battery(_ entries: [BatteryEntry]) -> [UInt8] {
        var body: [UInt8] = [UInt8(truncatingIfNeeded: entries.count)]
        for entry in entries { body += [entry.kind, 0x01, entry.level, entry.status, 0x01] }
        return message(opcode: Opcode.battery, body: body)
    }

    /// An audio-source notification: the host address in reversed (little-endian) byte order,
    /// then the activity byte.
    public static func audioSource(address: BluetoothAddress, activity: UInt8) -> [UInt8] {
        message(opcode: Opcode.audioSource, body: address.littleEndianBytes + [activity])
    }
}

extension BluetoothAddress {
    /// The six bytes in the order Bluetooth puts them on the air (least significant first).
    var littleEndianBytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) } }

    init(littleEndian bytes: ArraySlice<UInt8>) {
        self.init(bytes: Array(bytes.reversed()))
    }
}
