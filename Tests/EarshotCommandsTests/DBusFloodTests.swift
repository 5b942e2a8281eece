import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 21: one D-Bus client sending thousands of Updates without waiting must not hold up the
/// others' reads, and the output must follow the newest placement, not crawl through a backlog.
@Suite("D-Bus flood", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct DBusFloodTests {
    typealias D = DaemonFixture

    /// scripts/testing/dbus-flood.py (python3-dbus, a test dependency already): N Updates sent
    /// without waiting for replies, then a property read; prints the read's latency and when
    /// every Update was answered. scripts/bench dbus runs the same script for the figures.
    static let script = EarshotBinary.repository.appendingPathComponent("scripts/testing/dbus-flood.py").path

    @Test("5000 Updates queued by one client: every one is answered, so is a property read sent after them, and the output ends on the newest placement", arguments: [5000])
    func flood(count: Int) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let daemon = try D.start(in: sandbox)
            let call = ["busctl", "--user", "call", "org.earshot.Earshot1", "/org/earshot/Earshot1", "org.earshot.Earshot1"]
            let registered = try sandbox.run(call + [
                "Register", "ssasa{sv}", D.address, "org.example.flood", "2", "audio-switching", "placement", "1", "placement", "s", "on-head",
            ])
            #expect(registered.status == 0, "\(registered.output)")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            let result = try sandbox.run(["/usr/bin/python3", Self.script, String(count), D.address], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let words = result.output.split(whereSeparator: \.isWhitespace)
            let read = words.firstIndex(of: "read").flatMap { Double(words[$0 + 1]) } ?? -1
            let answered = words.firstIndex(of: "answered").flatMap { Int(words[$0 + 1]) } ?? -1
            // The read is answered (before issue 21 it came 25 s behind 5000 Updates). That it
            // does not queue behind them is checked by order, with a change held in the daemon
            // (DBusReadOrderTests); a bound in seconds here failed on a loaded run (issue 28).
            #expect(read >= 0, "\(result.output)")
            #expect(answered == count, "\(result.output)")
            // The newest placement (off-head) holds once the grace has run.
            _ = try await sandbox.observer.waitUntil("the speakers after the flood", timeout: .seconds(10)) { $0.isDefault(D.speakers) }
        }
    }
}
