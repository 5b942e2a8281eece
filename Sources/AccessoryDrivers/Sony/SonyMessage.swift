/// The MDR protocol generation, told by the length of the handshake's reply.
public enum SonyProtocolVersion: Int, Sendable, Hashable {
    /// WH-1000XM3/XM4 kind: 4-byte reply, battery `10`/`11`/`13`.
    case v1 = 1
    /// Everything later: 8-byte reply, battery `22`/`23`/`25`, table 2 where enabled.
    case v2 = 2
}

/// What one well-formed frame says, on its own. `SonySession` and `SonyDecoder` both read frames
/// through this, so the session and `earshot driver decode` classify every frame alike.
enum SonyMessage: Sendable, Hashable {
    case ack(seq: UInt8)
    /// `01 00 …`: 4 bytes v1; 8 bytes v2, whose byte 7 is 00 when table 2 is enabled.
    case protocolInfo(SonyProtocolVersion, table2Enabled: Bool)
    /// `07 00 n (id priority)×n`.
    case supportFunctions(SonyFrame.Kind, ids: [UInt8])
    case battery(SonyBatteryReading)
    case wear(SonyWearReading)
    /// A `c9` operation-log push; `mentionsWear` when its text names a wear operation
    /// (the WH-1000XM6 logs `unitWear` / `unitRemove`).
    case log(mentionsWear: Bool)
    /// Known, carrying nothing Earshot reads (other pushes, replies to other requests).
    case ignored(opcode: UInt8)
    case unknown(opcode: UInt8)
    /// Well framed but impossible: too short for its opcode, the wrong table, an unknown frame
    /// type. `key` tells kinds of problem apart for notes.
    case malformed(why: String, key: Int)

    static func decode(_ frame: SonyFrame, version: SonyProtocolVersion) -> SonyMessage {
        let payload = frame.payload
        guard let kind = frame.kind else {
            return .malformed(why: "frame type \(hex(frame.type)) no note names", key: 0x100 + Int(frame.type))
        }
        if kind == .ack {
            return payload.isEmpty ? .ack(seq: frame.seq) : .malformed(why: "ACK carrying \(payload.count) payload bytes", key: 0x200)
        }
        guard let opcode = payload.first else { return .malformed(why: "data frame without an opcode", key: 0x201) }
        switch (kind, opcode) {
        case (.table1, 0x01):
            switch payload.count {
            case 4: return .protocolInfo(.v1, table2Enabled: false)
            case 8: return .protocolInfo(.v2, table2Enabled: payload[7] == 0x00)
            default: return .malformed(why: "protocol info of \(payload.count) bytes (4 or 8 expected)", key: 0x202)
            }
        case (_, 0x07):
            guard payload.count >= 3, payload.count >= 3 + 2 * Int(payload[2]) else {
                return .malformed(why: "support-function list of \(payload.count) bytes", key: 0x203)
            }
            let count = Int(payload[2])
            return .supportFunctions(kind, ids: (0..<count).map { payload[3 + 2 * $0] })
        case (.table1, 0x23), (.table1, 0x25):
            return version == .v2 ? battery(payload, version: version) : known(kind, opcode, version: version)
        case (.table1, 0x11), (.table1, 0x13):
            return version == .v1 ? battery(payload, version: version) : known(kind, opcode, version: version)
        case (_, 0xF3), (_, 0xF5):
            return wear(payload, table: kind) ?? known(kind, opcode, version: version)
        case (.table1, 0xC9):
            return .log(mentionsWear: mentionsWear(payload.dropFirst()))
        default:
            return known(kind, opcode, version: version)
        }
    }

    private static func battery(_ payload: [UInt8], version: SonyProtocolVersion) -> SonyMessage {
        switch SonyBatteryReading.decode(payload, version: version) {
        case let .reading(reading): .battery(reading)
        case .notBattery: .ignored(opcode: payload[0])
        case let .truncated(why): .malformed(why: why, key: 0x204)
        }
    }

    /// `f3`/`f5` with inquired type 0x10 (table 1) or 0x00 (table 2); nil for other SYSTEM types.
    private static func wear(_ payload: [UInt8], table: SonyFrame.Kind) -> SonyMessage? {
        guard payload.count >= 2 else { return .malformed(why: "SYSTEM status without a type", key: 0x205) }
        let isPush = payload[0] == 0xF5
        switch payload[1] {
        case 0x10:
            guard table == .table1 else { return .malformed(why: "wrong table: table-1 wear status (\(hex(payload[0])) 10) on table 2", key: 0x206) }
            // RET `f3 10 <b>`, NTFY `f5 10 01 <b>`.
            guard payload.count >= (isPush ? 4 : 3), let last = payload.last else {
                return .malformed(why: "wear status of \(payload.count) bytes", key: 0x207)
            }
            return .wear(.table1(worn: last == 0x00))
        case 0x00:
            guard table == .table2 else { return .malformed(why: "wrong table: table-2 wearing status (\(hex(payload[0])) 00) on table 1", key: 0x208) }
            guard payload.count >= 3 else { return .malformed(why: "wearing status of \(payload.count) bytes", key: 0x209) }
            return .wear(.table2(code: payload[2]))
        default:
            return nil
        }
    }

    /// Whether a log entry's text names a wear operation ("wear", "remov"; any case).
    static func mentionsWear(_ bytes: some Collection<UInt8>) -> Bool {
        let lowered = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return [Array("wear".utf8), Array("remov".utf8)].contains { word in
            lowered.count >= word.count && (0...(lowered.count - word.count)).contains { lowered[$0..<($0 + word.count)].elementsEqual(word) }
        }
    }

    private static func known(_ table: SonyFrame.Kind, _ opcode: UInt8, version: SonyProtocolVersion) -> SonyMessage {
        let known: Set<UInt8> =
            switch (table, version) {
            case (.table2, _): SonyOpcodes.knownTable2
            case (_, .v1): SonyOpcodes.knownTable1V1
            case (_, .v2): SonyOpcodes.knownTable1V2
            }
        return known.contains(opcode) ? .ignored(opcode: opcode) : .unknown(opcode: opcode)
    }
}

/// Opcodes a set may send that Earshot does not read: the pushes public notes list, replies to
/// requests other clients send, and the host's own requests (a capture written by hand may
/// hold them). Sources: SonyHeadphonesClient `src/ProtocolV2T1.h`, `ProtocolV2T2.hpp`;
/// Gadgetbridge `PayloadTypeV1`.
enum SonyOpcodes {
    static let hostRequests: Set<UInt8> = [0x00, 0x02, 0x04, 0x06, 0x10, 0x22, 0xC4, 0xF2]
    static let knownTable1V2: Set<UInt8> = hostRequests.union([
        0x03, 0x05, 0x11, 0x13, 0x15, 0x19, 0x67, 0x69, 0x55, 0x59, 0x95, 0x99, 0xA5, 0xA9, 0xD5, 0xD9, 0xE5, 0xE9,
        0xF3, 0xF5, 0xF7, 0xF9, 0xFB, 0xFD,
    ])
    static let knownTable1V1: Set<UInt8> = hostRequests.union([
        0x05, 0x15, 0x17, 0x19, 0x1B, 0x1D, 0x25, 0x27, 0x47, 0x49, 0x57, 0x59, 0x67, 0x69, 0x85, 0x87, 0x89, 0x91, 0xA7, 0xA9,
        0xD7, 0xD9, 0xE7, 0xE9, 0xF3, 0xF5, 0xF7, 0xF9, 0xFB, 0xFD,
    ])
    static let knownTable2: Set<UInt8> = hostRequests.union([
        0x25, 0x29, 0x35, 0x39, 0x3D, 0x45, 0x47, 0x49, 0x55, 0x59, 0x65, 0x69, 0x75, 0x79, 0xF3, 0xF5, 0xF9, 0xFD,
    ])
}
