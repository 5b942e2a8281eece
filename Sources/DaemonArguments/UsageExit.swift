import ArgumentParser
import SystemPackage

/// ArgumentParser's own `main()`, except that a usage error exits 2 instead of 64 (EX_USAGE):
/// Earshot's exit codes are 0 ok, 1 refused, 2 usage, 3 daemon not reachable, the same for
/// `earshot` and `earshotd` (so `earshot daemon`, which hands over to earshotd, exits alike).
public enum UsageExit {
    public static func main<Command: ParsableCommand>(_ type: Command.Type) async -> Never {
        do {
            var command = try type.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            type.exit()
        } catch {
            if type.exitCode(for: error) == .validationFailure {
                _ = try? FileDescriptor.standardError.writeAll(Array((type.fullMessage(for: error) + "\n").utf8))
                type.exit(withError: ExitCode(2))
            }
            type.exit(withError: error)
        }
    }
}
