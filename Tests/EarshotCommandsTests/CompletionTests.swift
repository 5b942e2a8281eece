import Foundation
import TestScheduling
import Testing

/// Shell completions offer the values an option takes and files where it takes a file.
@Suite(.blockingCalls)
struct CompletionTests {
    @Test("zsh, bash and fish completions offer placements, capabilities, formats and files", arguments: ["zsh", "bash", "fish"])
    func completionValues(shell: String) throws {
        let script = try EarshotBinary.run(["--generate-completion-script", shell])
        #expect(script.status == 0)
        let text = script.standardOutput
        for value in ["in-ear", "on-head", "over-the-ear", "off-head", "audio-switching", "summary", "full"] {
            #expect(text.contains(value), "\(shell): \(value) not offered")
        }
        if shell == "zsh" { #expect(text.contains("_files -g '\\''*.toml'\\''"), "config files for --config") }
    }
}

/// Help texts wrap as prose, not where the source happened to break its lines.
struct HelpWrapTests {
    @Test("eval --help and watch --help: no sentence broken mid-way, nothing past 90 columns", arguments: ["eval", "watch"])
    func wraps(command: String) throws {
        let help = try EarshotBinary.run([command, "--help"], environment: ["COLUMNS": "80"])
        #expect(help.status == 0)
        let lines = help.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let usage = lines.filter { !$0.hasPrefix("USAGE:") }
        #expect(usage.allSatisfy { $0.count <= 90 }, "\(usage.filter { $0.count > 90 })")
        #expect(!help.standardOutput.contains("media players paused\nand resumed"))
        #expect(!help.standardOutput.contains("time runs on\nuntil"))
    }
}
