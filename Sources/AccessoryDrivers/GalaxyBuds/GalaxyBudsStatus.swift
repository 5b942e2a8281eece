/// Wear and battery state read from a STATUS_UPDATED (0x60) or EXTENDED_STATUS_UPDATED (0x61)
/// payload. Offsets per generation come from the public notes cited in docs/drivers.md.
struct GalaxyBudsStatus: Sendable, Hashable {
    /// Left, then right.
    var buds: BudPair
    var battery: BatteryReport
    /// Fields whose value no public note explains (left out of `buds` / `battery`).
    var unknownValues: Int

    private struct Layout {
        var leftBattery: Int
        var rightBattery: Int
        var wear: Int
        var caseBattery: Int?

        var minimumCount: Int { max(leftBattery, rightBattery, wear, caseBattery ?? 0) + 1 }
    }

    /// Byte offsets per generation and message.
    ///   first generation, 0x60: 1 left, 2 right, 5 wear byte
    ///   first generation, 0x61: 2 left, 3 right, 6 wear byte
    ///   later, 0x60:            1 left, 2 right, 5 placement nibbles, 6 case
    ///   later, 0x61:            2 left, 3 right, 6 placement nibbles, 7 case
    private static func layout(id: UInt8, model: GalaxyBudsModel) -> Layout? {
        let extended: Bool
        switch id {
        case GalaxyBudsFrame.MessageID.statusUpdated: extended = false
        case GalaxyBudsFrame.MessageID.extendedStatusUpdated: extended = true
        default: return nil
        }
        let shift = extended ? 1 : 0
        let caseBattery = model.framing == .legacy ? nil : 6 + shift
        return Layout(leftBattery: 1 + shift, rightBattery: 2 + shift, wear: 5 + shift, caseBattery: caseBattery)
    }

    static func isStatus(id: UInt8) -> Bool {
        id == GalaxyBudsFrame.MessageID.statusUpdated || id == GalaxyBudsFrame.MessageID.extendedStatusUpdated
    }

    /// nil when the payload is too short for its layout (or the id is not a status message).
    static func decode(id: UInt8, payload: [UInt8], model: GalaxyBudsModel) -> GalaxyBudsStatus? {
        guard let layout = layout(id: id, model: model), payload.count >= layout.minimumCount else { return nil }
        var unknown = 0
        let buds: BudPair
        if model.framing == .legacy {
            buds = legacyWear(payload[layout.wear], unknown: &unknown)
        } else {
            let byte = payload[layout.wear]
            buds = BudPair(placement(byte >> 4, unknown: &unknown), placement(byte & 0x0F, unknown: &unknown))
        }
        var battery = BatteryReport()
        // A disconnected bud's level byte is stale: leave it out.
        if buds.first != .disconnected { battery.left = level(payload[layout.leftBattery], unknown: &unknown) }
        if buds.second != .disconnected { battery.right = level(payload[layout.rightBattery], unknown: &unknown) }
        if let at = layout.caseBattery { battery.chargingCase = level(payload[at], unknown: &unknown) }
        return GalaxyBudsStatus(buds: buds, battery: battery, unknownValues: unknown)
    }

    /// First generation: 0x00 neither, 0x01 right only, 0x10 left only, 0x11 both; any other
    /// byte neither (as the reference client reads it). (The early
    /// protocol notes swap 0x01 and 0x10; the client's code, which the notes predate, reads them
    /// this way. The wear rules are symmetric, so the placement is the same either way.)
    private static func legacyWear(_ byte: UInt8, unknown: inout Int) -> BudPair {
        switch byte {
        case 0x00: return BudPair(.outOfEar, .outOfEar)
        case 0x01: return BudPair(.outOfEar, .inEar)
        case 0x10: return BudPair(.inEar, .outOfEar)
        case 0x11: return BudPair(.inEar, .inEar)
        default:
            // The reference client reads a bud as worn only for its own bit pattern: any other
            // byte is neither bud in an ear (counted, as every value no note explains).
            unknown += 1
            return BudPair(.outOfEar, .outOfEar)
        }
    }

    /// Later generations, one nibble per bud: 0 disconnected, 1 wearing, 2 not wearing,
    /// 3 in the case, 4 in the closed case.
    private static func placement(_ nibble: UInt8, unknown: inout Int) -> BudState {
        switch nibble {
        case 0: return .disconnected
        case 1: return .inEar
        case 2: return .outOfEar
        case 3, 4: return .inCase
        default:
            unknown += 1
            return .unrecognized
        }
    }

    /// Charging is not decoded: where it exists (some Buds2-and-later firmware) its presence
    /// depends on the firmware revision, which this layer does not track.
    private static func level(_ byte: UInt8, unknown: inout Int) -> BatteryLevel? {
        guard byte <= 100 else {
            unknown += 1
            return nil
        }
        return BatteryLevel(percent: Int(byte), isCharging: nil)
    }
}
