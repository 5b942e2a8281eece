import ArgumentParser
import Foundation

/// What a command prints and how it exits, computed before anything is printed so the logic
/// can be tested without running the binary.
struct CommandOutcome {
    var standardOutput = ""
    var standardError = ""
    var exitCode: Int32 = 0

    func emit() throws {
        if !standardOutput.isEmpty { FileHandle.standardOutput.write(Data(standardOutput.utf8)) }
        if !standardError.isEmpty { FileHandle.standardError.write(Data(standardError.utf8)) }
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}
