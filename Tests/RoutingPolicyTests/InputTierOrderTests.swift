import AudioGraph
import Foundation
import RoutingPolicy
import Testing

/// Issue 32 part 2: `[input] tier-order`, the input's own tier order (docs/policy.md §2, §8):
/// "my USB desk mic, always" while a worn headset takes the output.
@Suite("[input] tier-order: the input ranks by its own tier order")
struct InputTierOrderTests {
    static let deskMicrophone = "alsa_input.usb-Blue_Yeti-00.analog-stereo"
    static let deskMicrophoneNode = InputPolicyTests.source(63, deskMicrophone, ["device.bus": "usb", "device.form-factor": "microphone"])
    static let ruleAboveWorn: [RankTier] = [.override, .restore, .rulePriority, .worn, .arrived, .lastChoice, .classOrder, .sessionPriority]

    /// A `[[rule]]` giving the desk microphone priority 1000, with `inputOrder` as `[input] tier-order`.
    static func config(inputOrder: [RankTier]?) throws -> PolicyConfig {
        var text = """
            [[rule]]
            match = { "node.name" = "alsa_input.usb-Blue_Yeti-*" }
            priority = 1000

            """
        if let inputOrder { text += "[input]\ntier-order = [\(inputOrder.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))]\n" }
        return try PolicyConfigLoader.parse(text, file: "desk.toml")
    }

    /// The desktop with the laptop's and the desk's microphones and the headphones' (the desk
    /// microphone the configured default source); the headphones go on. The first decision and
    /// the one the headphones going on made.
    static func wearHeadphones(_ config: PolicyConfig) -> (initial: Decision, on: Decision) {
        let graph = InputPolicyTests.graph([InputPolicyTests.headphonesMicrophoneNode, deskMicrophoneNode], configuredSource: deskMicrophone)
        var (engine, initial) = InputPolicyTests.engine(graph, config: config)
        _ = engine.handle(Requests.register(Sinks.headphonesAddress, placement: .offHead), at: 10)
        return (initial, engine.handle(Requests.place(Sinks.headphonesAddress, .onHead), at: 1000).decision)
    }

    @Test("rule-priority above worn for the input: the worn headset takes the output, the desk microphone stays the default source")
    func deskMicrophoneAlways() throws {
        let (initial, on) = Self.wearHeadphones(try Self.config(inputOrder: Self.ruleAboveWorn))
        #expect(initial.defaultSource == Self.deskMicrophone)
        #expect(on.defaultSink == Sinks.headphones && on.changed)
        #expect(on.decidedBy?.tier == .worn)
        let input = try #require(on.input)
        #expect(input.defaultSource == Self.deskMicrophone && !input.changed)
        #expect(input.ranking.map(\.node).prefix(2) == [Self.deskMicrophone, InputPolicyTests.headphonesMicrophone])
        let decider = try #require(on.decidedBy(in: input.ranking, on: .input))
        #expect(decider.tier == .rulePriority)
        #expect(decider.why.hasPrefix("beats \(InputPolicyTests.headphonesMicrophone) at rule-priority (priority 1000"), "\(decider.why)")
        // The terms come in the input's order: rule-priority before worn.
        let headsetTerms = on.explanation(of: input.ranking[1], on: .input).terms.map(\.tier)
        #expect(headsetTerms.firstIndex(of: .worn) != nil)
        let deskTerms = on.explanation(of: input.ranking[0], on: .input).terms.map(\.tier)
        #expect(deskTerms.first == .rulePriority)
        // The output's explanation keeps the top-level order.
        #expect(on.explanation(of: on.ranking[0]).terms.first?.tier == .worn)

        // The decision record (eval JSON, status --explain) says the same per side.
        let record = DecisionRecord(on)
        #expect(record.decidedBy?.tier == "worn")
        #expect(record.input?.decidedBy?.tier == "rule-priority")
        #expect(record.input?.ranking.first?.tiers.first?.tier == "rule-priority")
        let text = DecisionText.render(on, detail: .full)
        #expect(text.contains("beats \(Sinks.speakers) at worn") || text.contains("at worn ("), "\(text)")
        #expect(text.contains("beats \(InputPolicyTests.headphonesMicrophone) at rule-priority (priority 1000"), "\(text)")
    }

    @Test("without [input] tier-order the input ranks as the output: worn above the rule, the headset's microphone takes the input")
    func withoutTheKeyWornWins() throws {
        let config = try Self.config(inputOrder: nil)
        #expect(config.input.tierOrder == nil && config.tierOrder(for: .input) == config.tierOrder)
        let (initial, on) = Self.wearHeadphones(config)
        #expect(initial.defaultSource == Self.deskMicrophone)
        #expect(on.defaultSink == Sinks.headphones)
        let input = try #require(on.input)
        #expect(input.defaultSource == InputPolicyTests.headphonesMicrophone && input.changed)
        #expect(on.decidedBy(in: input.ranking, on: .input)?.tier == .worn)
    }

    @Test("an input order reordering what the output ranks by leaves the output alone, decision after decision")
    func outputKeepsTheTopLevelOrder() throws {
        // Each side keeps its own ranking scratch: the input's order never ranks the output.
        var config = try Self.config(inputOrder: RankTier.defaultOrder.reversed())
        let reversedInput = Self.wearHeadphones(config).on
        config.input.tierOrder = nil
        let plain = Self.wearHeadphones(config).on
        #expect(reversedInput.defaultSink == plain.defaultSink && reversedInput.ranking.map(\.node) == plain.ranking.map(\.node))
        #expect(reversedInput.decidedBy?.tier == plain.decidedBy?.tier)
    }
}
