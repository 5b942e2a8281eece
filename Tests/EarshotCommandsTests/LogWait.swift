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
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw FixtureError("inotify_init1: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(inotify) }
        inotify_add_watch(inotify, log.path, UInt32(IN_MODIFY))
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Watched first, then read: a line written in between is in the read or wakes the poll.
        while wholeLog.components(separatedBy: text).count - 1 < occurrences {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, !hasExited else {
                throw FixtureError("\(name) never logged \(text) \(occurrences) time(s):\n\(logTail(lines: 200))")
            }
            // At most a second at a time: an exit writes nothing to the log, so it is checked between waits.
            var poller = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(min(left.components.seconds * 1000 + 1, 1000)))
            _ = read(inotify, &buffer, buffer.count)
            await Task.yield()
        }
    }

    private var wholeLog: String {
        logFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
    }
}
