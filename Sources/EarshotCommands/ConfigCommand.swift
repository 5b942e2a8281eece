import ArgumentParser
import FoundationEssentials
import RoutingPolicy

/// `earshot config check|show`.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check or show the configuration.",
        subcommands: [ConfigCheckCommand.self, ConfigShowCommand.self])
}

struct ConfigCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a config file; exit 1 with every error as file:line:column.",
        discussion: "Without FILE, checks the file the search order finds: $XDG_CONFIG_HOME/earshot/earshot.toml, then /etc/earshot/earshot.toml.")

    @Argument(help: "The config file to check: a file, a pipe, or - for stdin.")
    var file: String?

    func run() throws {
        try ConfigActions.check(file: file, environment: ProcessInfo.processInfo.environment).emit()
    }
}

enum ConfigSchemaFormat: String, ExpressibleByArgument, CaseIterable, Sendable { case markdown, man }

struct ConfigShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show which config file applies and what it says.")

    @Option(help: "Use this config file instead of searching (a file, a pipe, or - for stdin).", completion: .file(extensions: ["toml"]))
    var config: String?

    @Flag(help: "Print the effective configuration: every key with the value in force.")
    var effective = false

    @Flag(help: "Print the config schema as a Markdown table (name, type, default, range, meaning).")
    var schema = false

    @Option(help: "With --schema: markdown (the table in docs/policy.md) or man (the earshot.toml(5) page, roff; dated by SOURCE_DATE_EPOCH if set).")
    var format: ConfigSchemaFormat = .markdown

    func validate() throws {
        if format != .markdown && !schema { throw ValidationError("--format applies to --schema only") }
    }

    func run() throws {
        try ConfigActions.show(
            explicit: config, effective: effective, schema: schema ? format : nil, environment: ProcessInfo.processInfo.environment
        ).emit()
    }
}
