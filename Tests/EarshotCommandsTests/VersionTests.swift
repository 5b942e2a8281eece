@testable import EarshotCommands
import WireFields
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

/// The version is written in one place, VERSION, and reaches the binary through
/// EarshotVersionPlugin at build time.
@Suite(.blockingCalls) struct VersionTests {
    var versionFile: String {
        get throws {
            try String(contentsOf: EarshotBinary.repository.appendingPathComponent("VERSION"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func generatedFromTheVersionFile() throws {
        #expect(!(try versionFile).isEmpty)
        #expect(EarshotVersion.current == (try versionFile))
    }

    @Test func binaryPrintsTheVersionFile() throws {
        let result = try EarshotBinary.run(["--version"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == (try versionFile) + "\n")
    }

    @Test func configShowSchemaAsManPage() throws {
        let result = try EarshotBinary.run(["config", "show", "--schema", "--format", "man"], environment: ["SOURCE_DATE_EPOCH": "1767312000"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == ConfigManualPage.render(version: try versionFile, date: "2026-01-02"))
        let misuse = try EarshotBinary.run(["config", "show", "--format", "man"])
        #expect(misuse.status == 2, "\(misuse.status) \(misuse.standardError)")
        #expect(misuse.standardError.contains("--format applies to --schema only"))
    }
}
