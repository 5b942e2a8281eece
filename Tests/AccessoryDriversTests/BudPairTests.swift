import RoutingPolicy
import Testing
@testable import AccessoryDrivers

struct BudPairTests {
    @Test func wearRuleRawValues() {
        #expect(WearRule.either.rawValue == "either")
        #expect(WearRule.both.rawValue == "both")
        #expect(WearRule(rawValue: "both") == .both)
    }

    /// The expected placement for every combination, written out from the rules' definitions.
    static func expected(_ a: BudState, _ b: BudState, _ rule: WearRule) -> Placement? {
        let buds = [a, b]
        let definitelyOut: (BudState) -> Bool = { $0 == .outOfEar || $0 == .inCase || $0 == .disconnected }
        switch rule {
        case .either:
            if buds.contains(.inEar) { return .inEar }
            if buds.allSatisfy(definitelyOut) { return .offHead }
            return nil
        case .both:
            if buds.allSatisfy({ $0 == .inEar }) { return .inEar }
            if buds.contains(where: definitelyOut) { return .offHead }
            return nil
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
        #expect(BudPair(.unrecognized, .outOfEar).placement(rule: .either) == nil)
        #expect(BudPair(.unrecognized, .outOfEar).placement(rule: .both) == .offHead)
        #expect(BudPair(.unrecognized, .inEar).placement(rule: .either) == .inEar)
        #expect(BudPair(.unrecognized, .inEar).placement(rule: .both) == nil)
    }
}
