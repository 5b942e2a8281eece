import Foundation
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `earshot config check|show` as a user runs them.
@Suite(.blockingCalls)
struct ConfigCLITests {
    @Test func shippedConfigChecksClean() throws {
        let result = try EarshotBinary.run(["config", "check", EarshotBinary.repository.appendingPathComponent("config/earshot.toml").path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasSuffix(": ok\n"))
    }

    @Test func checkCatchesATypoWithLineAndColumn() throws {
        let file = try EarshotBinary.temporaryFile("typo.toml", "restore-previous = true\n\n[timing]\n  of-grace-ms = 300\non-delay-ms = \"fast\"\n")
        let result = try EarshotBinary.run(["config", "check", file])
        #expect(result.status == 1)
        let errors = result.standardError.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors.first?.hasPrefix("\(file):4:3: unknown key \"of-grace-ms\" in [timing] (did you mean \"off-grace-ms\"?)") == true, "\(errors)")
        #expect(errors.last?.hasPrefix("\(file):5:1: timing.on-delay-ms must be an integer") == true)
    }

    @Test func checkWithoutFileUsesTheSearchOrder() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-xdg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("earshot"), withIntermediateDirectories: true)
        try "[timing]\noff-grace-ms = 250\n".write(to: home.appendingPathComponent("earshot/earshot.toml"), atomically: true, encoding: .utf8)
        let check = try EarshotBinary.run(["config", "check"], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(check.status == 0)
        #expect(check.standardOutput.contains(home.appendingPathComponent("earshot/earshot.toml").path))
        let show = try EarshotBinary.run(["config", "show", "--effective"], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(show.standardOutput.contains("off-grace-ms = 250"))
        let plain = try EarshotBinary.run(["config", "show"], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(plain.standardOutput.contains("# in use: \(home.path)/earshot/earshot.toml"))
        #expect(plain.standardOutput.contains("# tier-order in force (docs/policy.md §2): override > restore > worn > arrived > rule-priority > last-choice > class-order"))
    }

    /// Issue 21: `config check` says what the daemon would: a dangling link at the search path
    /// is an error (it was passed over for the built-in defaults), a file over 16 MiB is refused
    /// with its size, unread.
    @Test func checkReportsADanglingLinkAndAHugeFile() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-xdg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("earshot"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let path = home.appendingPathComponent("earshot/earshot.toml").path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: home.appendingPathComponent("dotfiles/earshot.toml").path)
        let check = try EarshotBinary.run(["config", "check"], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(check.status == 1)
        #expect(check.standardError == "\(path):1:1: cannot read the file: No such file or directory\n")
        let show = try EarshotBinary.run(["config", "show"], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(show.status == 1)

        let huge = home.appendingPathComponent("huge.toml").path
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, (16 << 20) + 1) == 0)
        let refused = try EarshotBinary.run(["config", "check", huge])
        #expect(refused.status == 1)
        #expect(refused.standardError == "\(huge):1:1: cannot read the file: it is 16777217 bytes, over the limit of 16 MiB\n")
    }

    @Test func showEffectivePrintsTierOrderAndNoHugeNumber() throws {
        let file = try EarshotBinary.temporaryFile("tiers.toml", "tier-order = [\"worn\", \"override\", \"restore\", \"arrived\", \"rule-priority\", \"last-choice\", \"class-order\"]\n")
        let result = try EarshotBinary.run(["config", "show", "--effective", "--config", file])
        #expect(result.status == 0, "\(result.standardError)")
        // A 0.2 list (no session-priority) gets the new tier after class-order.
        #expect(result.standardOutput.contains(#"\#ntier-order = ["worn", "override", "restore", "arrived", "rule-priority", "last-choice", "class-order", "session-priority"]\#n"#))
        #expect(result.standardOutput.range(of: "[0-9]{15}", options: .regularExpression) == nil)
        #expect(!result.standardOutput.contains("weights"))
    }

    @Test func checkRefusesWeightsAndBadTierOrders() throws {
        let file = try EarshotBinary.temporaryFile(
            "old.toml", "tier-order = [\"override\", \"worn\", \"worn\"]\n\n[weights]\nworn = 10000000000\n")
        let result = try EarshotBinary.run(["config", "check", file])
        #expect(result.status == 1)
        let errors = result.standardError.split(separator: "\n").map(String.init)
        #expect(errors.count == 2, "\(errors)")
        #expect(errors.first?.hasPrefix("\(file):1:35: tier-order lists \"worn\" twice") == true, "\(errors)")
        #expect(errors.last?.hasPrefix("\(file):4:1: weights.* was replaced by tier-order") == true, "\(errors)")
    }

    /// Issue 32: `config check` accepts `[input] tier-order`; `show` says which order the input uses.
    @Test func inputTierOrderIsCheckedAndShown() throws {
        let file = try EarshotBinary.temporaryFile(
            "input-tiers.toml", "[input]\ntier-order = [\"override\", \"restore\", \"rule-priority\", \"worn\", \"arrived\", \"last-choice\", \"class-order\", \"session-priority\"]\n")
        let check = try EarshotBinary.run(["config", "check", file])
        #expect(check.status == 0, "\(check.standardError)")
        let effective = try EarshotBinary.run(["config", "show", "--effective", "--config", file])
        #expect(effective.standardOutput.contains(#"\#n[input]\#n"#))
        #expect(effective.standardOutput.contains(#"\#ntier-order = ["override", "restore", "rule-priority", "worn", "arrived", "last-choice", "class-order", "session-priority"]\#n"#))
        let plain = try EarshotBinary.run(["config", "show", "--config", file])
        #expect(plain.standardOutput.contains("# [input] tier-order in force (§8, its own): override > restore > rule-priority > worn >"), "\(plain.standardOutput)")
        let bad = try EarshotBinary.temporaryFile("bad-input-tiers.toml", "[input]\ntier-order = [\"worn\"]\n")
        let refused = try EarshotBinary.run(["config", "check", bad])
        #expect(refused.status == 1)
        #expect(refused.standardError.hasPrefix("\(bad):2:1: input.tier-order must list every tier exactly once; missing"), "\(refused.standardError)")
        let schema = try EarshotBinary.run(["config", "show", "--schema", "--format", "man"])
        #expect(schema.standardOutput.contains(".SS [input]\n"))
        #expect(schema.standardOutput.contains("default \\fBthe top\\-level tier\\-order\\fR"), "\(schema.standardOutput)")
        #expect(schema.standardOutput.contains("The input's own tier order, checked as the top\\-level tier\\-order"))
    }

    @Test func showEffectiveWithoutAFileIsTheShippedDefault() throws {
        let result = try EarshotBinary.run(["config", "show", "--effective"])
        let shipped = try String(contentsOf: EarshotBinary.repository.appendingPathComponent("config/earshot.toml"), encoding: .utf8)
        // Holds unless /etc/earshot/earshot.toml exists on the test machine.
        if !FileManager.default.fileExists(atPath: "/etc/earshot/earshot.toml") {
            #expect(result.standardOutput == shipped)
        }
    }
}
