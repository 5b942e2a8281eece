import Foundation
import Testing

/// Shell completions offer the values an option takes and files where it takes a file.
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
