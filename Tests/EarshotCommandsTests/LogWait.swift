import Foundation
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// Waits until the log holds `text` at least `occurrences` times: each change of the log
    /// file wakes the wait (inotify), up to `timeout`. Fails early when the process exits.
    func waitForLog(containing text: String, occurrences: Int = 1, timeout: Duration = .seconds(15)) async throws {
        guard let log = logFile else { throw FixtureError("\(name) has no log") }
        let found = await waitUntil(changesOf: log.path, timeout: timeout) {
            wholeLog.components(separatedBy: text).count - 1 >= occurrences
        }
        guard found else { throw FixtureError("\(name) never logged \(text) \(occurrences) time(s):\n\(logTail(lines: 200))") }
    }

    /// How many times the log holds `text` now.
    func logCount(of text: String) -> Int { wholeLog.components(separatedBy: text).count - 1 }

    private var wholeLog: String {
        logFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
    }
}
