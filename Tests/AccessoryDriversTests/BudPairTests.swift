import WireFields
import RoutingPolicy
import Testing
@testable import AccessoryDrivers

struct BudPairTests {
    @Test func wearRuleRawValues() {
        #expect(WearRule.either.rawValue == "either")
        #expect(WearRule.both.rawValue == "both")
        #expect(WearRule(rawValue: "both") == .both)
    }

    /// The expected placement for every combination, written out from the rules' definitions:
    /// an unrecognized bud is never read as in an ear; with both unrecognized nothing is said.
    static func expected(_ a: BudState, _ b: BudState, _ rule: WearRule) -> Placement? {
        let buds = [a, b]
        if buds.allSatisfy({ $0 == .unrecognized }) { return nil }
        switch rule {
        case .either: return buds.contains(.inEar) ? .inEar : .offHead
        case .both: return buds.allSatisfy({ $0 == .inEar }) ? .inEar : .offHead
        }
    }

    @Test(arguments: WearRule.allCases)
    func everyCombination(rule: WearRule) {
        for a in BudState.allCases {
            for b in BudState.allCases {
                #expect(BudPair(a, b).placement(rule: rule) == Self.expected(a, b, rule), "\(a), \(b), \(rule)")
            }
        }
    }

    @Test func spotChecks() {
        #expect(BudPair(.inEar, .inCase).placement(rule: .either) == .inEar)
        #expect(BudPair(.inEar, .inCase).placement(rule: .both) == .offHead)
        #expect(BudPair(.inEar, .inEar).placement(rule: .both) == .inEar)
        #expect(BudPair(.outOfEar, .inCase).placement(rule: .either) == .offHead)
        #expect(BudPair(.inEar, .disconnected).placement(rule: .either) == .inEar)
        #expect(BudPair(.unrecognized, .outOfEar).placement(rule: .either) == .offHead)
        #expect(BudPair(.unrecognized, .unrecognized).placement(rule: .either) == nil)
        #expect(BudPair(.unrecognized, .unrecognized).placement(rule: .both) == nil)
        #expect(BudPair(.unrecognized, .outOfEar).placement(rule: .both) == .offHead)
        #expect(BudPair(.unrecognized, .inEar).placement(rule: .either) == .inEar)
        #expect(BudPair(.unrecognized, .inEar).placement(rule: .both) == .offHead)
    }
}
