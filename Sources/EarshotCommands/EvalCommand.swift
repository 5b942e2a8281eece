import ArgumentParser

// Placeholder: issue 3 fills this in (offline dry run over a pw-dump and an event script).
struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "eval", abstract: "Dry-run the policy over a saved graph and an event script.")
}
