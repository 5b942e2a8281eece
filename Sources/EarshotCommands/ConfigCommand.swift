import ArgumentParser

// Placeholder: issue 3 fills this in (config check / config show).
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Check or show the configuration.")
}
