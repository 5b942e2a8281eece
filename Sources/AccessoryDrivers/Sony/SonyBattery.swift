/// One MDR battery message: v2 `23`/`25 <type> …` (RET / NTFY on table 1), v1 `11`/`13 <type> …`
/// (SonyHeadphonesClient `src/ProtocolV2T1.h`, Gadgetbridge `PayloadTypeV1`/`PayloadTypeV2`).
struct SonyBatteryReading: Sendable, Hashable {
    /// Which battery a value belongs to.
    enum Part: Sendable, Hashable {
        /// The one battery of headphones (a "single" message).
        case headset
        case left
        case right
        case chargingCase
    }

    struct Slot: Sendable, Hashable {
        var part: Part
        /// nil: the message names the part but reports no level (an absent bud, a level over 100).
        var level: BatteryLevel?
    }

    var slots: [Slot]
    /// Fields holding a value no public note explains (a level over 100, a charging byte over 3).
    var unknownValues: Int

    /// The inquired types and the payload length each needs (v2; v1 has only 00, 01, 02).
    enum Layout: UInt8, CaseIterable {
        case single = 0x00, leftRight = 0x01, chargingCase = 0x02
        case singleWithThreshold = 0x08, leftRightWithThreshold = 0x09, chargingCaseWithThreshold = 0x0A

        var minimumPayload: Int {
            switch self {
            case .single, .chargingCase: 4
            case .singleWithThreshold, .chargingCaseWithThreshold: 5
            case .leftRight: 6
            case .leftRightWithThreshold: 8
            }
        }

        func isOffered(by version: SonyProtocolVersion) -> Bool {
            version == .v2 || rawValue <= 0x02
        }
    }

    enum Outcome: Sendable, Hashable {
        case reading(SonyBatteryReading)
        /// A POWER type that is not a battery (power off, link control ...): known, not read.
        case notBattery
        case truncated(String)
    }

    /// `payload` starts with the opcode; the thresholds are not read.
    static func decode(_ payload: [UInt8], version: SonyProtocolVersion) -> Outcome {
        guard payload.count >= 2 else { return .truncated("battery message without a type") }
        guard let layout = Layout(rawValue: payload[1]), layout.isOffered(by: version) else { return .notBattery }
        guard payload.count >= layout.minimumPayload else {
            return .truncated("battery type \(hex(payload[1])) of \(payload.count) bytes (\(layout.minimumPayload) expected)")
        }
        var unknownValues = 0
        func level(_ at: Int, zeroIsAbsent: Bool) -> BatteryLevel? {
            let percent = payload[at]
            // Gadgetbridge and the battery meter read a bud at 0 % as not reported (out of reach, in the case).
            if zeroIsAbsent, percent == 0 { return nil }
            guard percent <= 100 else {
                unknownValues += 1
                return nil
            }
            let charging: Bool?
            switch payload[at + 1] {
            case 0x01: charging = true
            // NOT_CHARGING and CHARGED (full, on the cable): not charging now.
            case 0x00, 0x03: charging = false
            case 0x02: charging = nil
            default:
                unknownValues += 1
                charging = nil
            }
            return BatteryLevel(percent: Int(percent), isCharging: charging)
        }
        let slots: [Slot]
        switch layout {
        case .single, .singleWithThreshold: slots = [Slot(part: .headset, level: level(2, zeroIsAbsent: false))]
        case .chargingCase, .chargingCaseWithThreshold: slots = [Slot(part: .chargingCase, level: level(2, zeroIsAbsent: false))]
        case .leftRight, .leftRightWithThreshold:
            slots = [Slot(part: .left, level: level(2, zeroIsAbsent: true)), Slot(part: .right, level: level(4, zeroIsAbsent: true))]
        }
        return .reading(SonyBatteryReading(slots: slots, unknownValues: unknownValues))
    }

    /// The report after this reading: the parts it names take its values, the others stay.
    func applied(to report: BatteryReport) -> BatteryReport {
        var report = report
        for slot in slots {
            switch slot.part {
            case .headset: report.headset = slot.level
            case .left: report.left = slot.level
            case .right: report.right = slot.level
            case .chargingCase: report.chargingCase = slot.level
            }
        }
        return report
    }
}

/// Which battery requests a set gets, from its support-function list (function ids: v2
/// SonyHeadphonesClient `src/Constants.h`, v1 test-bluetooth-battery-meter `sonyConfig.js`).
enum SonyBatteryRequests {
    /// The payloads, single first, then left/right, then the case. A list naming no battery
    /// function (or none read) gets what the form implies.
    static func payloads(version: SonyProtocolVersion, functions: Set<UInt8>, form: SonyForm) -> [[UInt8]] {
        // (function with threshold, function without) -> inquired type; v1 has no threshold kind.
        let choices: [(UInt8?, UInt8, [UInt8])] =
            switch version {
            case .v2: [(0x28, 0x20, [0x22, 0x00]), (0x29, 0x21, [0x22, 0x01]), (0x2A, 0x22, [0x22, 0x02])]
            case .v1: [(nil, 0x11, [0x10, 0x00]), (nil, 0x15, [0x10, 0x01]), (nil, 0x18, [0x10, 0x02])]
            }
        var payloads: [[UInt8]] = []
        for (threshold, plain, request) in choices {
            if let threshold, functions.contains(threshold) {
                // The threshold variant's inquired type is the plain one's plus 8 (22 08, 22 09, 22 0A).
                payloads.append([request[0], request[1] + 0x08])
            } else if functions.contains(plain) {
                payloads.append(request)
            }
        }
        if !payloads.isEmpty { return payloads }
        let get: UInt8 = version == .v2 ? 0x22 : 0x10
        switch form {
        case .headphones: return [[get, 0x00]]
        case .earbuds: return [[get, 0x01], [get, 0x02]]
        }
    }
}
