import RoutingPolicy

/// How a Sony set is asked whether it is worn.
public enum SonyWearMethod: String, Sendable, Hashable {
    /// Table 1, SYSTEM status type 0x10: `f2 10` → `f3 10 <b>`, pushes `f5 10 01 <b>` (00 worn),
    /// as the WH-1000XM6 answers (omarchy-headphones `PROTOCOL.md`, `sony-bridge`).
    case table1Status = "table-1 wear status"
    /// Table 2 WEARING_STATUS_CHECKER (support id 0xF0): `f2 00` → `f3 00 <code>`, pushes
    /// `f5 00 <code>` (SonyHeadphonesClient `libmdr/include/mdr/ProtocolV2T2.hpp`).
    case table2Checker = "table-2 wearing status checker"

    var table: SonyFrame.Kind {
        switch self {
        case .table1Status: .table1
        case .table2Checker: .table2
        }
    }

    var request: [UInt8] {
        switch self {
        case .table1Status: [0xF2, 0x10]
        case .table2Checker: [0xF2, 0x00]
        }
    }
}

/// One wear message.
enum SonyWearReading: Sendable, Hashable {
    /// Table 1 `f3 10 <b>` / `f5 10 01 <b>`: the last byte 00 is worn, anything else is not.
    case table1(worn: Bool)
    /// Table 2 WearingStatusCode: 0 both worn, 1 illegal, 2 left not worn, 3 right not worn,
    /// 4 both not worn.
    case table2(code: UInt8)

    var method: SonyWearMethod {
        switch self {
        case .table1: .table1Status
        case .table2: .table2Checker
        }
    }

    /// A table-2 code no public note explains (1, ILLEGAL, is explained: it says nothing).
    var isUnknownCode: Bool {
        if case let .table2(code) = self { return code > 4 }
        return false
    }

    /// Each side, left first: the buds of earbuds, the cups of headphones (`.inEar` = worn).
    var sides: BudPair {
        switch self {
        case let .table1(worn): return worn ? BudPair(.inEar, .inEar) : BudPair(.outOfEar, .outOfEar)
        case let .table2(code):
            switch code {
            case 0: return BudPair(.inEar, .inEar)
            case 2: return BudPair(.outOfEar, .inEar)
            case 3: return BudPair(.inEar, .outOfEar)
            case 4: return BudPair(.outOfEar, .outOfEar)
            default: return BudPair(.unrecognized, .unrecognized)
            }
        }
    }

    /// Earbuds follow the wear rule. Headphones with one cup lifted are still on the head (the
    /// set is worn, pushed aside to talk): only both cups off is `off-head`. Nil when the
    /// message says nothing usable (ILLEGAL, an unknown code): never an invented placement.
    func placement(form: SonyForm, rule: WearRule) -> Placement? {
        let sides = self.sides
        switch form {
        case .earbuds:
            return sides.placement(rule: rule)
        case .headphones:
            guard let either = sides.placement(rule: .either) else { return nil }
            return either == .inEar ? .onHead : .offHead
        }
    }
}
