import EarshotDaemon
import Foundation
import Synchronization
import SystemBridge
import Testing

/// The daemon's config watcher: the file changing and SIGHUP reload; nothing after stop.
@Suite("config watcher", .timeLimit(.minutes(1)))
struct ConfigWatcherTests {
    @Test("a write to the file and SIGHUP each report a cause; after stop neither does")
    func reportsThenStops() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-watch-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = "\(root)/earshot.toml"
        let causes = Mutex<[String]>([])
        let watcher = ConfigWatcher(paths: [path]) { cause in causes.withLock { $0.append(cause) } }
        #expect(watcher.fileWatchFailure == nil)
        #expect(watcher.signalFailure == nil)

        try Data("[policy]\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(await eventually { causes.withLock { $0 }.contains("\(path) changed") })
        Signal.hangUp.send()
        #expect(await eventually { causes.withLock { $0 }.contains("SIGHUP") })

        watcher.stop()
        let count = causes.withLock { $0.count }
        try Data("[policy]\n# edited\n".utf8).write(to: URL(fileURLWithPath: path))
        Signal.hangUp.send()  // ignored now: the test process lives on
        try await Task.sleep(for: .milliseconds(200))
        #expect(causes.withLock { $0.count } == count)
    }

    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
