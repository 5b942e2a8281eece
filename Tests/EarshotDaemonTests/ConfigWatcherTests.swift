import EarshotDaemon
import Foundation
import Synchronization
import SystemBridge
import TestScheduling
import Testing

/// The daemon's config watcher: the file changing and SIGHUP reload; nothing after stop.
@Suite("config watcher", .timeLimit(.minutes(1)), .blockingCalls)
struct ConfigWatcherTests {
    @Test("a write to the file and SIGHUP each report a cause; after stop neither does")
    func reportsThenStops() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-watch-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = "\(root)/earshot.toml"
        let causes = Mutex<[String]>([])
        let (reports, report) = AsyncStream.makeStream(of: String.self)
        let watcher = ConfigWatcher(paths: [path]) { cause in
            causes.withLock { $0.append(cause) }
            report.yield(cause)
        }
        #expect(watcher.fileWatchFailure == nil)
        #expect(watcher.signalFailure == nil)
        var next = reports.makeAsyncIterator()

        try Data("[policy]\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try await Self.first(of: &next) { $0 == "\(path) changed" })
        Signal.hangUp.send()
        #expect(try await Self.first(of: &next) { $0 == "SIGHUP" })

        // stop() returns once both watcher threads have ended: nothing can report after it,
        // so the count is checked at once (no waiting to see that nothing comes).
        watcher.stop()
        let count = causes.withLock { $0.count }
        try Data("[policy]\n# edited\n".utf8).write(to: URL(fileURLWithPath: path))
        Signal.hangUp.send()  // ignored now: the test process lives on
        report.finish()
        while await next.next() != nil {}
        #expect(causes.withLock { $0.count } == count)
    }

    /// Waits for the first report matching `wanted`, failing after a generous deadline.
    private static func first(
        of reports: inout AsyncStream<String>.Iterator, _ wanted: (String) -> Bool
    ) async throws -> Bool {
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))  // the deadline, not a synchronisation
            Issue.record("no matching report within 10 s")
        }
        defer { deadline.cancel() }
        while let cause = await reports.next() {
            if wanted(cause) { return true }
        }
        return false
    }
}
