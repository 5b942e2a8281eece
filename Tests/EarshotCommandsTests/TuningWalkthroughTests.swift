import Foundation
import TestScheduling
import Testing

/// docs/policy.md's "Tuning your config" walkthrough, run on its own files (a real recording in
/// docs/examples): what it shows is what `earshot eval` prints.
@Suite(.blockingCalls)
struct TuningWalkthroughTests {
    static let examples = EarshotBinary.repository.appendingPathComponent("docs/examples").path

    @Test("--against on the example recording lists exactly the one decision the USB DAC rule changes, as the docs show; exit 1")
    func againstOnTheRealRecording() throws {
        let result = try EarshotBinary.run([
            "eval", "--graph", "\(Self.examples)/recording/graph.json", "--events", "\(Self.examples)/recording/events.jsonl",
            "--config", "\(Self.examples)/prefer-usb-dac.toml", "--against-builtin",
        ])
        #expect(result.status == 1, "\(result.standardError)")
        let rows = result.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("AT ms") && !$0.trimmingCharacters(in: .whitespaces).hasPrefix("old:") && !$0.trimmingCharacters(in: .whitespaces).hasPrefix("new:") }
        #expect(rows.count == 1, "\(result.standardOutput)")
        let docs = try String(contentsOf: EarshotBinary.repository.appendingPathComponent("docs/policy.md"), encoding: .utf8)
        for line in result.standardOutput.split(separator: "\n") {
            #expect(docs.contains("   " + line), "docs/policy.md shows an older output: \(line)")
        }
        // Replayed with the built-in defaults the daemon ran, nothing differs.
        let same = try EarshotBinary.run([
            "eval", "--graph", "\(Self.examples)/recording/graph.json", "--events", "\(Self.examples)/recording/events.jsonl",
            "--against-builtin", "--config", "\(Self.examples)/../../config/earshot.toml",
        ])
        #expect(same.status == 0, "\(same.standardOutput)\(same.standardError)")
    }
}
