import WireFields
import AudioGraph
import RoutingPolicy
import Testing

/// docs/policy.md, Match values: WirePlumber's match conventions in `[[rule]] match`: `~` regular
/// expressions, `!` negation, several tables (any matches), absent properties, and an error for
/// anything else that looks like syntax.
struct MatchSyntaxTests {
    /// The sinks a config's rules ignore, in the five-sink test graph.
    static func ignored(_ toml: String) throws -> Set<String> {
        let config = try PolicyConfigLoader.parse(toml, file: "m.toml")
        let decision = run([], config: config).last!
        return Set(decision.rejected.filter { $0.rejection.kind == "ignored" }.map(\.node))
    }

    static func rule(_ match: String) -> String { "[[rule]]\nmatch = \(match)\nignore = true\n" }

    @Test func negationMatchesEverythingElse() throws {
        #expect(try Self.ignored(Self.rule(#"{ "node.name" = "!*hdmi*" }"#)) == [Sinks.speakers, Sinks.dac, Sinks.headphones, Sinks.headset])
    }

    @Test func tildeIsAnUnanchoredRegularExpression() throws {
        #expect(try Self.ignored(Self.rule(#"{ "node.name" = "~alsa_output.*" }"#)) == [Sinks.speakers, Sinks.hdmi, Sinks.dac])
        // Searched anywhere in the value, as PipeWire and WirePlumber do; ^…$ anchors.
        #expect(try Self.ignored(Self.rule(#"{ "node.name" = "~h[a-p]mi-" }"#)) == [Sinks.hdmi])
        #expect(try Self.ignored(Self.rule(#"{ "node.name" = "~^hdmi" }"#)) == [])
        #expect(try Self.ignored(Self.rule(#"{ "device.bus" = "!~^(pci|usb)$" }"#)) == [Sinks.headphones, Sinks.headset])
    }

    @Test func severalTablesMatchWhenAnyMatches() throws {
        let toml = Self.rule(#"[{ "device.bus" = "usb" }, { "device.bus" = "pci", "device.profile.name" = "hdmi-*" }]"#)
        #expect(try Self.ignored(toml) == [Sinks.dac, Sinks.hdmi])
        // And it reads back from `config show --effective` as the same rule.
        let config = try PolicyConfigLoader.parse(toml, file: "m.toml")
        let again = try PolicyConfigLoader.parse(ConfigRenderer.toml(config), file: "m.toml")
        #expect(again.rules.map(\.alternatives) == config.rules.map(\.alternatives))
    }

    @Test func falseMatchesAnAbsentPropertyAndTrueAPresentOne() throws {
        #expect(try Self.ignored(Self.rule(#"{ "device.form-factor" = false }"#)) == [Sinks.hdmi, Sinks.dac])
        #expect(try Self.ignored(Self.rule(#"{ "api.bluez5.address" = true }"#)) == [Sinks.headphones, Sinks.headset])
        // A negated pattern holds for an absent property too: the property does not match.
        #expect(try Self.ignored(Self.rule(#"{ "device.form-factor" = "!head*" }"#)) == [Sinks.speakers, Sinks.hdmi, Sinks.dac])
    }

    @Test(arguments: [
        (#"{ "node.name" = "alsa_output.[a-p]*" }"#, #"2:25: rule[0].match."node.name": "[" is not glob syntax"#),
        (#"{ "node.name" = "{hdmi,usb}" }"#, #"2:25: rule[0].match."node.name": "{" is not glob syntax"#),
        (#"{ "node.name" = "~alsa(" }"#, #"2:25: rule[0].match."node.name": "alsa(" is not a regular expression"#),
        (#"{ "node.name" = "!" }"#, #"2:25: rule[0].match."node.name": "!" negates a pattern and needs one"#),
        (#"{ "node.name" = "~" }"#, #"2:25: rule[0].match."node.name": "~" starts a regular expression"#),
        (#"{ "node.name" = "!!x" }"#, #"2:25: rule[0].match."node.name": "!!" is a double negation"#),
        (#"[{ "node.name" = "a*" }, "b*"]"#, "2:1: rule[0].match[1] must be a table"),
        ("[]", "1:1: a [[rule]] needs a non-empty match"),
        (#"[{ "node.name" = "a*" }, {}]"#, "2:1: rule[0].match[1] is empty"),
    ])
    func syntaxThatIsNotSupportedIsAnError(_ match: String, _ expected: String) {
        do {
            _ = try PolicyConfigLoader.parse(Self.rule(match), file: "m.toml")
            Issue.record("\(match) was accepted")
        } catch {
            let lines = error.errors.map(\.description)
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.hasPrefix("m.toml:" + expected.prefix { $0 != " " }) == true, "\(lines)")
            #expect(lines.first?.contains(expected.drop { $0 != " " }.dropFirst()) == true, "\(lines)")
        }
    }

    @Test func patternsReadAsWritten() throws {
        #expect(try ValuePattern.parse("!~^a").get().description == "!~^a")
        #expect(try ValuePattern.parse("!~^a").get().holds(nil))
        #expect(try !ValuePattern.parse("~^a").get().holds(nil))
        #expect(try ValuePattern.parse("a?c").get().holds("abc"))
        #expect(ValuePattern.absent.holds(nil) && !ValuePattern.absent.holds(""))
    }

    /// Explanations name every alternative of the rule that decided.
    @Test func explanationNamesTheAlternatives() throws {
        let config = try PolicyConfigLoader.parse(Self.rule(#"[{ "device.bus" = "usb" }, { "node.name" = "~hdmi" }]"#), file: "m.toml")
        let decision = run([], config: config).last!
        let why = decision.why(decision.rejected.first { $0.node == Sinks.dac }!)
        #expect(why.contains(#"device.bus = "usb" or node.name = "~hdmi""#), "\(why)")
    }
}
