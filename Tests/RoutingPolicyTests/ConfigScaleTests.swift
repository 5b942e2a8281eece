@testable import RoutingPolicy
import Testing

/// Issue 12 item 3: locating keys in a config with thousands of `[[rule]]`s is linear. The work
/// is counted in lines examined, not timed (the benchmark times it: scripts/bench).
struct ConfigScaleTests {
    static func rules(_ count: Int) -> String {
        (0..<count).map { "[[rule]]\nmatch = { \"node.name\" = \"sink_\($0)_*\" }\npriority = \($0 % 1000)\n" }.joined(separator: "\n")
    }

    /// Lines examined to locate every rule and its priority, as the loader does.
    static func work(_ count: Int) -> Int {
        let locator = TOMLKeyLocator(file: "big.toml", text: rules(count))
        for index in 0..<count {
            _ = locator.locate([.key("rule"), .element(index)])
            _ = locator.locate([.key("rule"), .element(index), .key("priority")])
        }
        return locator.linesExamined
    }

    @Test func locatingEveryRuleIsLinear() {
        let small = Self.work(1000), large = Self.work(4000)
        // Rescanning the file per rule (the old header lookup) examined ~n²/2 lines: 8 million for 4000.
        #expect(large <= 4 * small + 100, "\(small) → \(large)")
        #expect(large < 20 * 4000, "\(large)")
    }

    @Test func fourThousandRulesParseWithEveryLocationRight() throws {
        let config = try PolicyConfigLoader.parse(Self.rules(4000), file: "big.toml")
        #expect(config.rules.count == 4000)
        #expect(config.rules.last?.location?.description == "big.toml:15997:1")
    }
}
