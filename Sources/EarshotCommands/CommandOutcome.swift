import ArgumentParser
import FoundationEssentials

/// What a command prints and how it exits, computed before anything is printed so the logic
/// can be tested without running the binary.
struct CommandOutcome {
    var standardOutput = ""
    var standardError = ""
    var exitCode: Int32 = 0

    func emit() throws {
        if !standardOutput.isEmpty { Console.output(standardOutput) }
        if !standardError.isEmpty { Console.error(standardError) }
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}
