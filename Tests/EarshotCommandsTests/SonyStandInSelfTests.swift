import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// The stand-in's Sony peer against the public notes' vectors (scripts/testing/standin_sony_selftest.py:
/// framing, stuffing, ACK seq, the busy ConnectProfile, handshakes, pushes, hostile commands),
/// without Earshot: the peer the Sony driver's live tests run against says what the notes say.
@Suite("BlueZ stand-in: Sony peer", .timeLimit(.minutes(2)), .blockingCalls)
struct SonyStandInSelfTests {
    @Test("the Sony peer's self-test (its own private bus) passes")
    func selfTest() throws {
        let script = EarshotBinary.repository.appendingPathComponent("scripts/testing/standin_sony_selftest.py").path
        var environment = ProcessInfo.processInfo.environment
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sony-selftest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for key in ["XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"] { environment[key] = root.path }
        let result = try Shell.run(["/usr/bin/python3", script], environment: environment, timeout: .seconds(90))
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
    }
}
