import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 item 11: file arguments may be pipes and FIFOs (`<(pw-dump)`, `/dev/stdin`) or `-`
/// for standard input, and a file that cannot be read is reported with the OS reason.
@Suite(.blockingCalls)
struct FileArgumentCLITests {
    static let graph = EarshotBinary.fixtures.appendingPathComponent("desktop.json").path
    static let events = EarshotBinary.fixtures.appendingPathComponent("headphones-on-off.jsonl").path

    /// Runs a bash command line with the built earshot as `$EARSHOT`.
    static func bash(_ script: String) throws -> EarshotBinary.Result {
        let earshot = try #require(EarshotBinary.url).path
        var environment = ProcessInfo.processInfo.environment
        environment["EARSHOT"] = earshot
        environment["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-tests-empty").path
        return try Shell.run(["/bin/bash", "-c", script], environment: environment)
    }

    @Test func evalReadsProcessSubstitutionsAndStdin() throws {
        // Text: the JSON's `rejected` order varies between runs (dictionary order), the text does not.
        let plain = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events])
        #expect(plain.status == 0)
        #expect(plain.standardOutput.split(separator: "\n").count > 12)
        let piped = try Self.bash(#"cat "\#(Self.graph)" | "$EARSHOT" eval --graph - --events <(cat "\#(Self.events)") --config <(printf '')"#)
        #expect(piped.status == 0, "\(piped.standardError)")
        #expect(piped.standardOutput == plain.standardOutput)
        let substituted = try Self.bash(#""$EARSHOT" eval --graph <(cat "\#(Self.graph)") --events /dev/stdin < <(cat "\#(Self.events)")"#)
        #expect(substituted.status == 0, "\(substituted.standardError)")
        #expect(substituted.standardOutput == plain.standardOutput)
        let twice = try Self.bash(#""$EARSHOT" eval --graph - --events - < /dev/null"#)
        #expect(twice.status == 2)
        #expect(twice.standardError.contains("only one of --graph, --events can read standard input"), "\(twice.standardError)")
    }

    @Test func configReadsAPipeAndStdin() throws {
        let check = try Self.bash(#"printf '[timing]\noff-grace-ms = 250\n' | "$EARSHOT" config check /dev/stdin"#)
        #expect(check.status == 0, "\(check.standardError)")
        let dash = try Self.bash(#"printf '[timing]\noff-grace = 250\n' | "$EARSHOT" config check -"#)
        #expect(dash.status == 1)
        #expect(dash.standardError.hasPrefix("<stdin>:2:1: unknown key \"off-grace\""), "\(dash.standardError)")
        let show = try Self.bash(#""$EARSHOT" config show --config <(printf '[timing]\noff-grace-ms = 250\n')"#)
        #expect(show.status == 0, "\(show.standardError)")
        #expect(show.standardOutput.contains("off-grace-ms = 250"))
    }

    @Test func unreadableFilesSayTheOSReasonAndThePath() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-dir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let missing = directory + "/missing.json"
        let cases: [([String], String)] = [
            (["config", "check", directory], "\(directory):1:1: cannot read the file: Is a directory"),
            (["config", "check", missing], "\(missing):1:1: cannot read the file: No such file or directory"),
            (["eval", "--graph", missing], "earshot eval: graph cannot read \(missing): No such file or directory"),
            (["eval", "--graph", directory], "earshot eval: graph cannot read \(directory): Is a directory"),
            (["eval", "--graph", Self.graph, "--events", directory], "earshot eval: events cannot read \(directory): Is a directory"),
            (["eval", "--graph", Self.graph, "--config", missing], "\(missing):1:1: cannot read the file: No such file or directory"),
        ]
        for (arguments, expected) in cases {
            let result = try EarshotBinary.run(arguments)
            #expect(result.status != 0)
            #expect(result.standardError.contains(expected), "\(arguments): \(result.standardError)")
            #expect(!result.standardError.contains("NSCocoaErrorDomain") && !result.standardError.contains("Cocoa"))
        }
        // Permission (root reads everything, so only as another user).
        if getuid() != 0 {
            let locked = try EarshotBinary.temporaryFile("locked.jsonl", "")
            chmod(locked, 0)
            let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", locked])
            #expect(result.standardError.contains("cannot read \(locked): Permission denied"), "\(result.standardError)")
        }
    }
}
