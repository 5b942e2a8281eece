import ArgumentParser

/// The `earshot` command tree. The executable target only calls `Earshot.main()`; every
/// command lives here so tests can drive it, and each command's logic lives below it.
public struct Earshot: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "earshot",
        abstract: "Audio routing policy engine for PipeWire: the output follows the headset you wear.",
        version: EarshotVersion.current,
        subcommands: [DaemonCommand.self, GraphCommand.self, ConfigCommand.self, EvalCommand.self, AccessoryCommand.self, ReportCommand.self, RecordCommand.self, DriverCommand.self, StatusCommand.self, WatchCommand.self]
    )

    public init() {}
}

// EarshotVersion.current comes from the VERSION file: EarshotVersionPlugin generates it at build time.
