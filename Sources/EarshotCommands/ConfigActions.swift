import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// The logic of `earshot config`: find, load, report.
enum ConfigActions {
    static func check(file: String?, environment: [String: String]) -> CommandOutcome {
        let source = ConfigSource.resolve(explicit: file, environment: environment, fileExists: InputFile.nameExists)
        do {
            _ = try source.load()
            return CommandOutcome(standardOutput: "\(source.description == "-" ? "<stdin>" : source.description): ok\n")
        } catch {
            return CommandOutcome(standardError: error.errors.map { "\($0)\n" }.joined(), exitCode: 1)
        }
    }

    /// `schema`: print the schema in that format instead of a config.
    static func show(explicit: String?, effective: Bool, schema: ConfigSchemaFormat?, environment: [String: String]) -> CommandOutcome {
        switch schema {
        case .markdown: return CommandOutcome(standardOutput: ConfigSchema.markdownTable + "\n")
        case .man: return CommandOutcome(standardOutput: ConfigManualPage.render(version: EarshotVersion.current, date: manualDate(environment)))
        case nil: break
        }
        let source = ConfigSource.resolve(explicit: explicit, environment: environment, fileExists: InputFile.nameExists)
        let config: PolicyConfig
        let text: String
        do throws(ConfigErrors) {
            (config, text) = try source.loadWithText()
        } catch {
            return CommandOutcome(standardError: error.errors.map { "\($0)\n" }.joined(), exitCode: 1)
        }
        if effective { return CommandOutcome(standardOutput: ConfigRenderer.toml(config)) }
        var lines = ["# search order:"]
        for candidate in ConfigSource.candidates(explicit: explicit, environment: environment) {
            let state = InputFile.nameExists(candidate) ? "found" : "absent"
            lines.append("#   \(candidate) (\(state))")
        }
        lines.append("# in use: \(source)")
        lines.append("# tier-order in force (docs/policy.md §2): \(config.tierOrder.map(\.rawValue).joined(separator: " > "))")
        let inputOrigin = config.input.tierOrder == nil ? "the top-level tier-order" : "its own"
        lines.append("# [input] tier-order in force (§8, \(inputOrigin)): \(config.tierOrder(for: .input).map(\.rawValue).joined(separator: " > "))")
        switch source {
        case .file:
            lines.append(text)
        case .builtIn:
            lines.append("# (no file: `earshot config show --effective` prints every default)")
        }
        return CommandOutcome(standardOutput: lines.joined(separator: "\n") + "\n")
    }

    /// The manual page's date: SOURCE_DATE_EPOCH (reproducible builds) as YYYY-MM-DD in UTC,
    /// else none, so the same binary always prints the same page.
    static func manualDate(_ environment: [String: String]) -> String {
        guard let text = environment["SOURCE_DATE_EPOCH"], let seconds = Int(text) else { return "" }
        return Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day())
    }
}
