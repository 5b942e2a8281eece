import WireFields
import Foundation
import RoutingPolicy
import Testing

/// The TOML config: schema, errors at file:line:column, search order, shipped default.
struct ConfigTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct BadCase: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        /// `line:column: message fragment` of each expected error.
        var errors: [String]
        var testDescription: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(name: "typo in a key", text: "[timing]\non-dely-ms = 100\n", errors: [#"2:1: unknown key "on-dely-ms" in [timing] (did you mean "on-delay-ms"?)"#]),
        BadCase(name: "typo in a top-level key", text: "restore-previos = false\n", errors: [#"1:1: unknown key "restore-previos""#]),
        BadCase(name: "typo in a table name", text: "\n[timeing]\non-delay-ms = 1\n", errors: [#"2:1: unknown key "timeing" in the top level (did you mean "timing"?)"#]),
        BadCase(name: "indented key", text: "[timing]\n   off-grace-ms = \"soon\"\n", errors: ["2:4: timing.off-grace-ms must be an integer in 0 … 60000, not a string"]),
        BadCase(name: "dotted key at top level", text: "timing.on-delay-ms = 70000\n", errors: ["1:1: timing.on-delay-ms must be an integer in 0 … 60000, not 70000"]),
        BadCase(name: "weights are refused with what to write instead", text: "restore-previous = true\n[weights]\narrival = 1000\nworn = 5\n",
                errors: ["3:1: weights.* was replaced by tier-order: tiers compare in order, first difference wins",
                         #"4:1: weights.* was replaced by tier-order: tiers compare in order, first difference wins (no weight can make a lower tier outweigh a higher one); remove [weights] and write tier-order = ["override", "restore", "worn", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]"#]),
        BadCase(name: "a dotted weight is refused too", text: "\nweights.class-order = 1\n", errors: ["2:1: weights.* was replaced by tier-order"]),
        BadCase(name: "an empty [weights] is refused", text: "[weights]\n", errors: ["1:1: weights.* was replaced by tier-order"]),
        BadCase(name: "unknown tier", text: #"tier-order = ["override", "restore", "wron", "arrived", "rule-priority", "last-choice", "class-order"]"#,
                errors: [#"1:38: tier-order: "wron" is not a tier (did you mean "worn"?); the tiers are override, restore, worn, arrived, rule-priority, last-choice, class-order"#]),
        BadCase(name: "tier listed twice", text: "\n\ntier-order = [\"override\", \"worn\", \"restore\", \"worn\", \"arrived\", \"rule-priority\", \"last-choice\", \"class-order\"]\n",
                errors: [#"3:46: tier-order lists "worn" twice; list every tier exactly once"#]),
        BadCase(name: "tier missing", text: #"tier-order = ["override", "restore", "worn", "arrived", "rule-priority", "class-order"]"#,
                errors: [#"1:1: tier-order must list every tier exactly once; missing "last-choice""#]),
        BadCase(name: "tier-order in a table", text: "[timing]\ntier-order = []\n", errors: [#"2:1: unknown key "tier-order" in [timing]"#]),
        BadCase(name: "tier-order not a list", text: "tier-order = \"worn\"\n", errors: ["1:1: tier-order must be an array of strings, not a string"]),
        BadCase(name: "unknown tier in [input] tier-order",
                text: "[input]\nfollow = \"worn-headset\"\ntier-order = [\"override\", \"restore\", \"rule-priorty\", \"worn\", \"arrived\", \"last-choice\", \"class-order\"]\n",
                errors: [#"3:38: input.tier-order: "rule-priorty" is not a tier (did you mean "rule-priority"?); the tiers are override, restore, worn"#]),
        BadCase(name: "[input] tier-order listing a tier twice",
                text: "[input]\ntier-order = [\"rule-priority\", \"override\", \"restore\", \"rule-priority\", \"worn\", \"arrived\", \"last-choice\", \"class-order\"]\n",
                errors: [#"2:55: input.tier-order lists "rule-priority" twice; list every tier exactly once"#]),
        BadCase(name: "[input] tier-order missing a tier",
                text: "\n[input]\ntier-order = [\"override\", \"restore\", \"rule-priority\", \"worn\", \"arrived\", \"class-order\"]\n",
                errors: [#"3:1: input.tier-order must list every tier exactly once; missing "last-choice""#]),
        BadCase(name: "[input] tier-order not a list", text: "[input]\ntier-order = \"rule-priority\"\n",
                errors: ["2:1: input.tier-order must be an array of strings, not a string"]),
        BadCase(name: "unknown class in a list", text: #"class-order = ["headphones", "hdmi", "speakers"]"#, errors: [#"1:38: class-order: "speakers" is not a sink class"#]),
        BadCase(name: "class listed twice", text: #"personal-classes = ["usb", "usb"]"#, errors: [#"1:28: personal-classes lists "usb" twice"#]),
        BadCase(name: "a repeated class and an unknown one are both reported",
                text: #"class-order = ["headphones", "tv", "usb", "headphones"]"#,
                errors: [#"1:30: class-order: "tv" is not a sink class"#, #"1:43: class-order lists "headphones" twice"#]),
        BadCase(name: "a key without its unit", text: "[timing]\noff-grace = 400\n", errors: [#"2:1: unknown key "off-grace" in [timing] (did you mean "off-grace-ms"?)"#]),
        BadCase(name: "a timing key at the top level", text: "off-grace = 400\n", errors: [#"1:1: unknown key "off-grace" in the top level (did you mean "off-grace-ms" in [timing]?)"#]),
        BadCase(name: "a non-string match value is one error", text: "[[rule]]\nmatch = { \"device.bus\" = 3 }\nignore = true\n",
                errors: [#"2:11: rule[0].match."device.bus" must be a string"#]),
        BadCase(name: "bad host address", text: #"host-addresses = ["11:22:33:44:55"]"#, errors: [#"1:19: host-addresses: "11:22:33:44:55" is not a Bluetooth address"#]),
        BadCase(name: "second rule's priority out of range",
                text: "[[rule]]\nmatch = { \"node.name\" = \"a*\" }\npriority = 1\n\n[[rule]]\nmatch = { \"node.name\" = \"b*\" }\npriority = 5000\n",
                errors: ["7:1: rule[1].priority must be an integer in -1000 … 1000, not 5000"]),
        BadCase(name: "rule with neither priority nor ignore", text: "[[rule]]\nmatch = { \"node.name\" = \"a*\" }\n", errors: ["1:1: a [[rule]] needs priority"]),
        BadCase(name: "rule with both", text: "[[rule]]\nmatch = { bus = \"usb\" }\npriority = 1\nignore = true\n", errors: ["4:1: a [[rule]] either ignores"]),
        BadCase(name: "non-string glob inside an inline table", text: "[[rule]]\nmatch = { \"node.name\" = \"a*\", \"device.bus\" = 3 }\nignore = true\n",
                errors: [#"2:31: rule[0].match."device.bus" must be a string"#]),
        BadCase(name: "unknown key in an accessory", text: "[[accessory]]\nname = \"bluez*\"\ncolour = \"red\"\n", errors: [#"3:1: unknown key "colour" in [[accessory]]"#]),
        BadCase(name: "static accessory declaring placement", text: "[[accessory]]\nname = \"bluez*\"\ncapabilities = [\"audio-switching\", \"placement\"]\n",
                errors: ["3:36: a static [[accessory]] has no reporter"]),
        BadCase(name: "accessory without descriptor", text: "[[accessory]]\ncapabilities = []\n", errors: ["1:1: an [[accessory]] needs at least one descriptor"]),
        BadCase(name: "bad reporter name", text: "[[accessory]]\naddress = \"AA:BB:CC:DD:EE:FF\"\nreporter = \"airpods\"\n", errors: ["3:1: accessory[0].reporter"]),
        BadCase(name: "TOML syntax error", text: "a = [\n", errors: ["1:7: TOML syntax"]),
        BadCase(name: "every error is reported", text: "restore-previous = 1\n[timing]\non-delay = 5\n[playback]\npause = true\n",
                errors: ["1:1: restore-previous must be true or false", #"3:1: unknown key "on-delay""#, #"5:1: unknown key "pause""#]),
    ]

    @Test(arguments: badCases)
    func reportsErrorsWithLineAndColumn(_ c: BadCase) {
        do {
            _ = try PolicyConfigLoader.parse(c.text, file: "t.toml")
            Issue.record("expected errors")
        } catch {
            let lines = error.errors.map(\.description)
            #expect(lines.count == c.errors.count, "\(lines)")
            for (line, expected) in zip(lines, c.errors) {
                #expect(line.hasPrefix("t.toml:" + expected.prefix { $0 != " " }), "\(line)")
                #expect(line.contains(expected.drop { $0 != " " }.dropFirst()), "\(line)")
            }
        }
    }

    @Test func readsEveryKind() throws {
        let text = """
            host-addresses = ["11:22:33:44:55:66"]
            restore-previous = false
            class-order = ["usb", "internal"]
            personal-classes = ["usb"]
            tier-order = ["worn", "override", "restore", "arrived", "last-choice", "rule-priority", "class-order"]
            [timing]
            on-delay-ms = 100
            off-grace-ms = 900
            [playback]
            pause-when-removed = false
            resume-window-ms = 2000
            [[rule]]
            match = { "node.name" = "*hdmi*" }
            ignore = true
            [[rule]]
            match = { "device.bus" = "usb" }
            priority = -3
            [[accessory]]
            address = "aa:bb:cc:dd:ee:ff"
            capabilities = ["audio-switching"]
            reporter = "org.example.reporter"
            """
        let config = try PolicyConfigLoader.parse(text, file: "all.toml")
        #expect(config.hostAddresses == [BluetoothAddress("11:22:33:44:55:66")!])
        #expect(!config.restorePrevious)
        #expect(config.classOrder == [.usb, .internal])
        #expect(config.onDelay == 100 && config.offGrace == 900)
        // Written before session-priority existed: the new tier goes right after class-order.
        #expect(config.tierOrder == [.worn, .override, .restore, .arrived, .lastChoice, .rulePriority, .classOrder, .sessionPriority])
        #expect(!config.playback.pauseWhenRemoved && config.playback.resumeWindow == 2000)
        #expect(config.rules.map(\.action) == [.ignore, .priority(-3)])
        #expect(config.rules.map { $0.location?.description } == ["all.toml:12:1", "all.toml:15:1"])
        #expect(config.accessories.first?.capabilities == [.audioSwitching])
        #expect(config.accessories.first?.address == BluetoothAddress("AA:BB:CC:DD:EE:FF"))
        // What `config show --effective` prints reads back as the same config.
        var again = try PolicyConfigLoader.parse(ConfigRenderer.toml(config), file: "all.toml")
        again.rules = again.rules.map { var rule = $0; rule.location = nil; return rule }
        again.accessories = again.accessories.map { var entry = $0; entry.location = nil; return entry }
        var expected = config
        expected.rules = expected.rules.map { var rule = $0; rule.location = nil; return rule }
        expected.accessories = expected.accessories.map { var entry = $0; entry.location = nil; return entry }
        #expect(again == expected)
    }

    @Test func shippedConfigIsTheBuiltInDefaultsWithEveryKey() throws {
        let url = Self.repository.appendingPathComponent("config/earshot.toml")
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text == ConfigRenderer.toml(.builtIn), "regenerate: touch /tmp/empty.toml; earshot config show --effective --config /tmp/empty.toml > config/earshot.toml")
        var config = try PolicyConfigLoader.parse(text, file: url.path)
        config.file = nil
        #expect(config == .builtIn)
        for key in ConfigSchema.keys {
            #expect(text.contains("\(key.name) = "), "\(key.path) missing from config/earshot.toml")
        }
        #expect(text.contains(#"tier-order = ["override", "restore", "worn", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]"#))
        #expect(!text.contains("weights"))
        #expect(text.range(of: "[0-9]{9,}", options: .regularExpression) == nil, "no huge numbers")
    }

    /// Each key is declared once: its default is what the built-in config holds, and the loader
    /// reads every declared key of PolicyConfig (a file setting them all to non-defaults).
    @Test func declarationsDriveTheLoader() throws {
        #expect(ConfigSchema.key("timing.off-grace-ms")?.defaultValue == "400")
        #expect(ConfigSchema.key("tier-order")?.defaultValue == #"["override", "restore", "worn", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]"#)
        #expect(ConfigSchema.key("rule[].priority")?.integers == -1000...1000)
        #expect(ConfigSchema.key("weights.worn") == nil)
        var custom = PolicyConfig()
        custom.hostAddresses = [BluetoothAddress("11:22:33:44:55:66")!]
        custom.restorePrevious = false
        custom.tierOrder = RankTier.defaultOrder.reversed()
        custom.classOrder = [.hdmi]
        custom.personalClasses = []
        custom.onDelay = 7
        custom.offGrace = 8
        custom.arrivalSettle = 11
        custom.flapHold = 12
        custom.playback.pauseWhenRemoved = false
        custom.playback.resumeWhenWorn = false
        custom.playback.resumeWindow = 9
        custom.playback.pauseWhenOtherHost = false
        custom.playback.holdUnpausable = .leave
        custom.drivers.aap = false
        custom.drivers.galaxyBuds = false
        custom.drivers.sony = false
        custom.drivers.inEar = .both
        custom.drivers.ignore = [BluetoothAddress("66:55:44:33:22:11")!]
        custom.drivers.batteryToDesktop = false
        custom.recordKeepHours = 12
        custom.input.follow = .never
        custom.input.bluetoothMicrophone = .always
        custom.input.callApplications = ["Jitsi Meet", "Firefox"]
        custom.input.tierOrder = [.rulePriority] + RankTier.defaultOrder.filter { $0 != .rulePriority }
        var loaded = try PolicyConfigLoader.parse(ConfigRenderer.toml(custom), file: "custom.toml")
        loaded.file = nil
        #expect(loaded == custom)
        // Every declared key of PolicyConfig itself was written with its non-default value.
        for key in ConfigSchema.keys where !key.table.hasSuffix("[]") {
            #expect(!ConfigRenderer.toml(custom).contains("\n\(key.name) = \(key.defaultValue)\n"), "\(key.path)")
        }
    }

    /// Issue 32: `[input] tier-order` is checked as the top-level one (the 0.2 rule too); left
    /// out, the input takes the top-level order and `--effective` says so in a comment.
    @Test func inputTierOrder() throws {
        let text = """
            tier-order = ["worn", "override", "restore", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]
            [input]
            tier-order = ["override", "restore", "rule-priority", "worn", "arrived", "last-choice", "class-order"]
            """
        let config = try PolicyConfigLoader.parse(text, file: "input.toml")
        let inputOrder: [RankTier] = [.override, .restore, .rulePriority, .worn, .arrived, .lastChoice, .classOrder, .sessionPriority]
        #expect(config.input.tierOrder == inputOrder)
        #expect(config.tierOrder(for: .input) == inputOrder && config.tierOrder(for: .output) == config.tierOrder)
        let rendered = ConfigRenderer.toml(config)
        #expect(rendered.contains("\n[input]\n"))
        #expect(rendered.contains(#"\#ntier-order = ["override", "restore", "rule-priority", "worn", "arrived", "last-choice", "class-order", "session-priority"]\#n"#))
        var again = try PolicyConfigLoader.parse(rendered, file: "input.toml")
        again.file = config.file
        #expect(again == config)

        var inherited = config
        inherited.input.tierOrder = nil
        #expect(inherited.tierOrder(for: .input) == inherited.tierOrder)
        let shown = ConfigRenderer.toml(inherited)
        #expect(shown.contains(#"# not set: the top-level tier-order, which is\#n# tier-order = ["worn", "override", "restore""#), "\(shown)")
        #expect(try PolicyConfigLoader.parse(shown, file: "input.toml").input.tierOrder == nil)
        #expect(ConfigSchema.key("input.tier-order")?.defaultValue == "the top-level tier-order")
        #expect(PolicyConfig.builtIn.input.tierOrder == nil)
    }

    @Test func docsCarryTheSchemaTable() throws {
        let text = try String(contentsOf: Self.repository.appendingPathComponent("docs/policy.md"), encoding: .utf8)
        #expect(text.contains(ConfigSchema.markdownTable), "regenerate the table: earshot config show --schema")
    }

    @Test func searchOrder() {
        let env = ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]
        #expect(ConfigSource.resolve(explicit: "/given.toml", environment: env) { _ in false } == .file("/given.toml"))
        #expect(ConfigSource.resolve(explicit: nil, environment: env) { $0 == "/x/earshot/earshot.toml" } == .file("/x/earshot/earshot.toml"))
        #expect(ConfigSource.resolve(explicit: nil, environment: env) { $0 == ConfigSource.systemPath } == .file("/etc/earshot/earshot.toml"))
        #expect(ConfigSource.resolve(explicit: nil, environment: env) { _ in false } == .builtIn)
        #expect(ConfigSource.candidates(explicit: nil, environment: ["HOME": "/h"]).first == "/h/.config/earshot/earshot.toml")
    }

    @Test func everySchemaKeyHasTypeDefaultRangeAndMeaning() {
        for key in ConfigSchema.keys {
            #expect(!key.type.isEmpty && !key.defaultValue.isEmpty && !key.range.isEmpty && key.meaning.hasSuffix("."), "\(key.path)")
        }
    }
}
