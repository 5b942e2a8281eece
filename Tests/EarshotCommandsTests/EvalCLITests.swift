import AudioGraph
import Foundation
import TestScheduling
import Testing

/// `earshot eval` as a user runs it, on the captured pw-dump and the fixture script.
@Suite(.blockingCalls)
struct EvalCLITests {
    static let graph = EarshotBinary.fixtures.appendingPathComponent("desktop.json").path
    static let events = EarshotBinary.fixtures.appendingPathComponent("headphones-on-off.jsonl").path

    @Test func textTellsLineByLineWhichSinkWinsAndWhy() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("   AT ms  TRIGGER") == true)
        #expect(lines.contains { $0.contains("5000  update AA:BB:CC:DD:EE:FF") && $0.contains("→ bluez_output.AA_BB_CC_DD_EE_FF.1") && $0.hasSuffix("placement-changed") })
        #expect(lines.contains { $0.contains("9400  off-grace AA:BB:CC:DD:EE:FF") && $0.contains("→ alsa_output.pci-0000_00_1f.3.analog-stereo") })
        #expect(lines.contains { $0.hasSuffix("winner: bluez_output.AA_BB_CC_DD_EE_FF.1: worn put on 5000 ms, primary source · class-order headphones (9 of 9)") })
        #expect(lines.contains { $0.hasSuffix("decided by worn: beats alsa_output.pci-0000_00_1f.3.analog-stereo at worn (put on 5000 ms vs not worn)") })
        #expect(result.standardOutput.range(of: "[0-9]{9,}", options: .regularExpression) == nil, "no score totals")
        #expect(lines.contains { $0.contains("refused: accessory-not-capable:") })
    }

    @Test func fullExplanationListsEverySinkAndRejection() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66", "--explain", "full"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("#5 alsa_output.pci-0000_00_1f.3.hdmi-stereo: class-order hdmi (1 of 9)"))
        #expect(result.standardOutput.contains("    class-order: §2.6 class hdmi, 1 place(s) from the bottom of class-order"))
        #expect(result.standardOutput.contains("✗ bluez_output.50_C2_ED_12_34_56.1: §1 accessory 50:C2:ED:12:34:56 is playing for another host"))
    }

    @Test func jsonIsOneDecisionPerEventAndTimer() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66", "--format", "json"])
        #expect(result.status == 0)
        let objects = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        // The initial decision, ten events, one off-grace timer (the flap at 6000–6200 fires none).
        try #require(objects.count == 12)
        #expect(objects.map { $0["trigger"] }.filter { $0 == .string("off-grace AA:BB:CC:DD:EE:FF") }.count == 1)
        #expect(objects.allSatisfy { $0["at"] != nil && $0["changed"] != nil && $0["ranking"] != nil && $0["rejected"] != nil })
        #expect(objects[3]["default"] == .string("bluez_output.AA_BB_CC_DD_EE_FF.1"))
        #expect(objects[3]["previous"] == .string("alsa_output.pci-0000_00_1f.3.analog-stereo"))
        #expect(objects[7]["error"]?["code"] == .string("accessory-not-capable"))
        #expect(objects[3]["decided-by"] == .object([
            "tier": .string("worn"), "runner-up": .string("alsa_output.pci-0000_00_1f.3.analog-stereo"),
            "why": .string("beats alsa_output.pci-0000_00_1f.3.analog-stereo at worn (put on 5000 ms vs not worn)"),
        ]))
        #expect(objects.allSatisfy { $0["decided-by"] != nil })
    }

    /// The same input prints the same JSON in every run (`rejected` followed hash order).
    @Test func jsonIsTheSameInEveryRun() throws {
        let runs = try (0..<6).map { _ in
            try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--format", "json"]).standardOutput
        }
        #expect(Set(runs).count == 1)
    }

    @Test func malformedEventLineExitsTwoWithItsLine() throws {
        let script = try EarshotBinary.temporaryFile("bad.jsonl", "{\"at\":0,\"select\":{\"node\":\"x\"}}\n{\"at\":1,\"select\":\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
        #expect(result.status == 2)
        #expect(result.standardError.contains("bad.jsonl:2: column 18: not valid JSON (cut short?)"), "\(result.standardError)")
    }

    static let register = #"{"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"on-head"}}"#

    /// Issue 12 item 2: a time near Int64.max after an on-head used to trap (exit 132).
    @Test func aTimeTooLateIsRefusedWithItsLineNotATrap() throws {
        let script = try EarshotBinary.temporaryFile("late.jsonl", Self.register + "\n" + #"{"at":9223372036854775500,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"}}"# + "\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains("late.jsonl:2: \"at\" 9223372036854775500 is too late: at most 9007199254740992 ms"), "\(result.standardError)")
        // The latest time allowed runs, its off-grace timer included.
        let edge = try EarshotBinary.temporaryFile("edge.jsonl", Self.register + "\n" + #"{"at":9007199254740992,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"}}"# + "\n")
        let ok = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", edge, "--format", "json"])
        #expect(ok.status == 0, "\(ok.standardError)")
        #expect(ok.standardOutput.contains(#""at":9007199254741392"#), "the off-grace fires 400 ms later")
    }

    /// Issue 12 item 10: the script format's rough edges.
    @Test func crlfLinesAreAccepted() throws {
        let script = try EarshotBinary.temporaryFile("crlf.jsonl", "# a comment\r\n" + Self.register + "\r\n" + #"{"at":10,"select":{"node":"alsa_output.pci-0000_00_1f.3.hdmi-stereo"}}"# + "\r\n\r\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script, "--format", "json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.split(separator: "\n").count == 3)
    }

    @Test func addOfAnIdInUseIsRefused() throws {
        let object = #"{"id":41,"type":"PipeWire:Interface:Node","info":{"props":{"node.name":"alsa_output.other","media.class":"Audio/Sink"}}}"#
        let script = try EarshotBinary.temporaryFile("dup.jsonl", #"{"at":5,"add":\#(object)}"# + "\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
        #expect(result.status == 2)
        #expect(result.standardError.contains(#"dup.jsonl:1: add: id 41 is already in the graph (node "alsa_output.pci-0000_00_1f.3.hdmi-stereo")"#), "\(result.standardError)")
    }

    @Test func selectOfAMissingNodeExitsTwoLikeRemove() throws {
        for verb in ["select", "remove"] {
            let script = try EarshotBinary.temporaryFile("missing.jsonl", #"{"at":5,"\#(verb)":{"node":"alsa_output.gone"}}"# + "\n")
            let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
            #expect(result.status == 2, "\(verb)")
            #expect(result.standardError.contains(#"missing.jsonl:1: \#(verb): no node named "alsa_output.gone" in the graph at this point"#), "\(result.standardError)")
        }
    }

    @Test func aBadAddSaysTheFileOnce() throws {
        let script = try EarshotBinary.temporaryFile("ev.jsonl", #"{"at":0,"add":{"id":"x","type":"PipeWire:Interface:Node"}}"# + "\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script])
        #expect(result.status == 2)
        #expect(result.standardError.contains("ev.jsonl:1: add"), "\(result.standardError)")
        #expect(result.standardError.components(separatedBy: "ev.jsonl").count == 2, "the file name once: \(result.standardError)")
    }

    @Test func usageShowsGraphAsRequired() throws {
        let result = try EarshotBinary.run(["eval", "--help"])
        #expect(result.standardOutput.contains("USAGE: earshot eval --graph <graph> [--events <events>]"), "\(result.standardOutput)")
        let missing = try EarshotBinary.run(["eval"])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("--graph"))
    }

    @Test("eval without --graph (or with options that clash) prints eval's usage, not earshot's", arguments: [
        [], ["--events", "x.jsonl"], ["--graph", graph, "--format", "svg", "--explain", "full"], ["--graph", graph, "--against", "x.toml", "--against-builtin"],
    ])
    func usageErrorsAreEvals(_ arguments: [String]) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-eval-usage-\(UUID().uuidString.prefix(8))").path
        let result = try EarshotBinary.run(["eval"] + arguments, environment: [
            "XDG_RUNTIME_DIR": root + "/runtime", "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config",
        ])
        #expect(result.status == 2)
        #expect(result.standardError.contains("Usage: earshot eval --graph <graph>"), "\(result.standardError)")
        #expect(!result.standardError.contains("earshot <subcommand>"), "\(result.standardError)")
        if arguments.count < 3 { #expect(result.standardError.hasPrefix("Error: --graph FILE is required")) }
    }

    @Test func malformedGraphExitsTwoWithItsLine() throws {
        let graph = try EarshotBinary.temporaryFile("graph.json", "[\n  {\"id\": 1},\n  {\"id\" 2}\n]\n")
        let result = try EarshotBinary.run(["eval", "--graph", graph])
        #expect(result.status == 2)
        #expect(result.standardError.contains("line 3"), "\(result.standardError)")
    }

    @Test func badHostAddressExitsTwo() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--host-address", "11:22:33"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("--host-address"))
    }

    @Test func configRulesShowTheirFileAndLine() throws {
        let config = try EarshotBinary.temporaryFile("earshot.toml", "[[rule]]\nmatch = { \"node.name\" = \"*hdmi*\" }\npriority = 100\n")
        // The start holds the default found (issue 19); a sink arriving ends that hold.
        let events = try EarshotBinary.temporaryFile("arrive.jsonl", #"{"at": 5, "add": {"id": 900, "type": "PipeWire:Interface:Node", "info": {"props": {"node.name": "alsa_output.extra", "media.class": "Audio/Sink", "device.bus": "pci"}}}}"# + "\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--config", config, "--events", events, "--format", "json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("rule at \(config):1 (node.name = \\\"*hdmi*\\\") priority 100"), "\(result.standardOutput)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let first = try JSONValue.parse(try #require(lines.first))
        #expect(first["default"] == .string("alsa_output.pci-0000_00_1f.3.analog-stereo"), "starting changes nothing")
        #expect(first["decided-by"]?["tier"] == .string("override"))
        // Rule priority ranks above the last choice (docs/policy.md §2): the HDMI sink wins.
        let last = try JSONValue.parse(try #require(lines.last))
        #expect(last["default"] == .string("alsa_output.pci-0000_00_1f.3.hdmi-stereo"))
        #expect(last["decided-by"]?["tier"] == .string("rule-priority"))
    }

    @Test func oldWeightsAreRefusedWithWhatToWriteInstead() throws {
        let config = try EarshotBinary.temporaryFile("weights.toml", "[timing]\noff-grace-ms = 300\n\n[weights]\nlast-choice = 100000\n")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--config", config])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("\(config):5:1: weights.* was replaced by tier-order"), "\(result.standardError)")
        #expect(result.standardError.contains(#"write tier-order = ["override", "restore", "worn", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]"#))
    }
}

/// Issue 20: the input in `earshot eval` (docs/policy.md §8).
struct EvalInputCLITests {
    static let graph = EarshotBinary.fixtures.appendingPathComponent("desktop-mics.json").path
    static let events = EarshotBinary.fixtures.appendingPathComponent("headset-microphone.jsonl").path

    @Test("JSON: default-source beside default on every decision, and the input's own record; the script's source expectations hold")
    func json() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--format", "json"])
        #expect(result.status == 0, "\(result.standardError)")
        let objects = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(objects.allSatisfy { $0["default-source"] != nil && $0["input"] != nil && $0["default"] != nil })
        let on = try #require(objects.first { $0["trigger"] == .string("update AA:BB:CC:DD:EE:FF") && $0["default"] == .string("bluez_output.AA_BB_CC_DD_EE_FF.1") })
        #expect(on["default-source"] == .string("bluez_input.AA_BB_CC_DD_EE_FF.0"))
        let input = try #require(on["input"])
        #expect(input["changed"] == .bool(true) && input["reason"] == .string("placement-changed"))
        #expect(input["previous"] == .string("alsa_input.pci-0000_00_1f.3.analog-stereo"))
        #expect(input["summary"] == .string("3/3 sources eligible"))
        #expect(input["decided-by"]?["tier"] == .string("worn"))
        guard case .object(let fields) = input else { Issue.record("input is not an object"); return }
        #expect(Set(fields.keys) == ["default", "previous", "changed", "reason", "summary", "ranking", "decided-by", "rejected", "previous-port", "port", "port-event"])
        let picked = try #require(objects.first { $0["trigger"] == .string("select-source alsa_input.usb-046d_HD_Pro_Webcam_C920-02.analog-stereo") })
        #expect(picked["changed"] == .bool(false) && picked["input"]?["reason"] == .string("user-override"))
    }

    @Test("text: an input line under each decision; a failed source expectation names the default source")
    func text() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("input → bluez_input.AA_BB_CC_DD_EE_FF.0 (placement-changed)"))
        #expect(result.standardOutput.contains("  3/3 sources eligible"))
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-input-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: script) }
        try #"{"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.reporter","capabilities":["audio-switching","placement"],"placement":"on-head"},"expect":{"not-default-source":"bluez_input.AA_BB_CC_DD_EE_FF.0"}}"#
            .write(to: script, atomically: true, encoding: .utf8)
        let failed = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", script.path])
        #expect(failed.status == 1)
        #expect(failed.standardOutput.contains("expected not-default-source bluez_input.AA_BB_CC_DD_EE_FF.0; the default source is bluez_input.AA_BB_CC_DD_EE_FF.0"), "\(failed.standardOutput)")
    }

    @Test("--against a config that does not follow the input: the input's differences, marked input")
    func against() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-never-\(UUID().uuidString).toml")
        defer { try? FileManager.default.removeItem(at: config) }
        try "[input]\nfollow = \"never\"\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--against", config.path, "--format", "json"])
        let differences = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(!differences.isEmpty, "\(result.standardError)")
        #expect(differences.allSatisfy { $0["direction"] == .string("input") && $0["old"]?["default"] == .null })
        #expect(differences.contains { $0["new"]?["default"] == .string("bluez_input.AA_BB_CC_DD_EE_FF.0") })
        let text = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--against", config.path])
        #expect(text.standardOutput.contains("mic · (none) → bluez_input.AA_BB_CC_DD_EE_FF.0"), "\(text.standardOutput)")
    }

    /// Issue 32: `[input] tier-order` with rule-priority above worn keeps a rule's microphone
    /// ("my USB desk mic, always") while the worn headphones take the output.
    @Test("[input] tier-order: the webcam's microphone a rule prefers stays the default source; decided-by per side")
    func inputTierOrder() throws {
        let config = try EarshotBinary.temporaryFile("input-tiers.toml", """
            [[rule]]
            match = { "node.name" = "alsa_input.usb-046d_HD_Pro_Webcam_C920-*" }
            priority = 1000

            [input]
            tier-order = ["override", "restore", "rule-priority", "worn", "arrived", "last-choice", "class-order", "session-priority"]

            """)
        let script = try EarshotBinary.temporaryFile("input-tiers.jsonl", """
            {"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.reporter","capabilities":["audio-switching","placement"],"placement":"off-head"}}
            {"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"},"expect":{"default":"bluez_output.AA_BB_CC_DD_EE_FF.1","default-source":"alsa_input.usb-046d_HD_Pro_Webcam_C920-02.analog-stereo"}}

            """)
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--config", config, "--events", script, "--format", "json"])
        #expect(result.status == 0, "\(result.standardError)\(result.standardOutput)")
        let objects = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        let on = try #require(objects.last)
        #expect(on["decided-by"]?["tier"] == .string("worn"))
        #expect(on["input"]?["decided-by"]?["tier"] == .string("rule-priority"))
    }

    @Test("the SVG timeline draws the sources that held the default source as lanes of their own")
    func svg() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--format", "svg"])
        #expect(result.status == 0, "\(result.standardError)")
        let svg = result.standardOutput
        #expect(svg.contains("mic · AA_BB_CC_DD_EE_FF.0") && svg.contains("mic · pci-0000_00_1f.3.analog-stereo"))
        #expect(svg.contains(#"class="span input""#))
        // Output lanes first, then the input's.
        let output = try #require(svg.range(of: ">pci-0000_00_1f.3.analog-stereo<")), input = try #require(svg.range(of: ">mic · pci-0000_00_1f.3.analog-stereo<"))
        #expect(output.lowerBound < input.lowerBound)
    }
}
