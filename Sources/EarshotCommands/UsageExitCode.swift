import ArgumentParser
import Foundation

extension Earshot {
    /// ArgumentParser's own `main()`, except that a usage error exits 2 instead of 64 (EX_USAGE):
    /// the CLI's exit codes are 0 ok, 1 refused, 2 usage, 3 daemon not reachable. Being declared
    /// on the type, this is the `main()` that `Earshot.main()` calls.
    public static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }
}
