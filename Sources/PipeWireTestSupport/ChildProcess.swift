import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A process started with `posix_spawn`, an empty signal mask and default signal
/// dispositions: `Foundation.Process` started from a concurrency thread passes its blocked
/// mask on, and then wireplumber and dbus-daemon ignore SIGTERM.
///
/// A reaper thread waits for the child from the start; `exitFD` becomes readable the moment
/// the child exits, so waits can watch it next to other descriptors instead of polling.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let name: String
    public let logFile: URL?
    /// Becomes readable (EOF) when the child has exited and been reaped.
    let exitFD: Int32
    private let lock = NSLock()
    private var status: Int32?
    private var groupStopped = false

    /// Whether the child leads a process group of its own, which `stop()` ends as a whole.
    public let leadsProcessGroup: Bool

    /// Spawns `arguments[0]` (looked up in PATH) with exactly `environment`.
    /// stdout and stderr go to `logFile` (appending), or to `stdoutFD` when given.
    /// stdin is `stdinFD` when given (e.g. the read end of `makePipe()`), else /dev/null.
    /// `newProcessGroup`: the child leads a new process group (its PID is the group's ID),
    /// which its descendants share unless they leave it: `stop()` then stops the whole group
    /// (a browser and its dozen helpers), not only the child.
    public init(
        name: String, arguments: [String], environment: [String: String], logFile: URL?,
        stdoutFD: Int32? = nil, stdinFD: Int32? = nil, newProcessGroup: Bool = false
    ) throws {
        self.name = name
        self.logFile = logFile
        self.leadsProcessGroup = newProcessGroup
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinFD {
            posix_spawn_file_actions_adddup2(&actions, stdinFD, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let logFile {
            posix_spawn_file_actions_addopen(&actions, 2, logFile.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            if let stdoutFD {
                posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
            } else {
                posix_spawn_file_actions_adddup2(&actions, 2, 1)
            }
        } else if let stdoutFD {
            posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = ChildProcess.spawnLock.withLock {
            posix_spawnp(&child, arguments[0], &actions, &attributes, argv, envp)
        }
        guard result == 0 else {
            throw FixtureError("cannot start \(arguments[0]): \(String(cString: strerror(result))) (is its package installed?)")
        }
        pid = child

        let (readEnd, writeEnd) = ChildProcess.makePipe()
        exitFD = readEnd
        let reaped = child
        let thread = Thread { [self] in
            var raw: Int32 = 0
            while waitpid(reaped, &raw, 0) < 0 && errno == EINTR {}
            lock.withLock { status = raw }
            close(writeEnd)
        }
        thread.name = "reaper-\(name)"
        thread.start()
    }

    deinit {
        close(exitFD)
    }

    /// Held around pipe creation and spawning: Glibc's Swift module lacks pipe2, so a pipe
    /// is close-on-exec only after fcntl, and a child spawned in between would inherit it.
    static let spawnLock = NSLock()

    /// A close-on-exec pipe (read end, write end); no child spawned meanwhile inherits it.
    public static func makePipe() -> (Int32, Int32) {
        spawnLock.withLock {
            var fds: [Int32] = [0, 0]
            pipe(&fds)
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
    }

    public var hasExited: Bool { lock.withLock { status != nil } }

    /// The exit code, or 128 + signal for a killed child; nil while running.
    public var exitStatus: Int32? {
        lock.withLock {
            guard let status else { return nil }
            return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
    }

    /// Waits for the child to exit, up to `timeout`. Returns its exit status, or nil on timeout.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        _ = Readiness.wait(for: [exitFD], timeout: timeout)
        return exitStatus
    }

    /// SIGTERM, then SIGKILL if it has not gone after `grace`; always reaps. A child that
    /// leads a process group is stopped with its group (`ProcessGroup.stop`).
    public func stop(grace: Duration = .seconds(5)) {
        if leadsProcessGroup {
            // Once: after that the group's ID may be reused by another's group.
            guard lock.withLock({ () -> Bool in
                defer { groupStopped = true }
                return !groupStopped
            }) else { return }
            ProcessGroup(id: pid).stop(leader: self, grace: grace)
            return
        }
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: grace) == nil {
            kill(pid, SIGKILL)
            waitForExit(timeout: .seconds(10))
        }
    }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// The last `lines` lines of the log, for failure reports.
    public func logTail(lines: Int = 40) -> String {
        guard let logFile, let text = try? String(contentsOf: logFile, encoding: .utf8) else { return "" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}

/// A fixture step that failed, with what to look at.
public struct FixtureError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Blocking waits on descriptors with a deadline (poll), instead of sleeping and re-checking.
enum Readiness {
    /// Returns the descriptors that became readable, or [] at the deadline.
    static func wait(for fds: [Int32], timeout: Duration) -> [Int32] {
        let deadline = ContinuousClock.now + timeout
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return [] }
            let millis = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            let count = poll(&polled, nfds_t(polled.count), millis)
            if count > 0 { return polled.filter { $0.revents != 0 }.map(\.fd) }
            if count < 0 && errno != EINTR { return [] }
        }
    }

    /// Waits until `path` exists or a watched child exits, blocking the calling thread.
    static func waitForFile(_ path: String, orExitOf child: ChildProcess, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var appearance = FileAppearance(path: path)
        defer { appearance.release() }
        while true {
            let look = appearance.look()
            if look.exists { return true }
            guard ContinuousClock.now < deadline, !child.hasExited else { return false }
            FileEvents.shared.waitBlocking(look.watch, after: look.seen, orReadable: child.exitFD, until: deadline)
        }
    }

    /// `waitForFile`, suspending instead of blocking: a sandbox's start waits here, so that many
    /// sandboxes starting at once do not hold the cooperative pool (two threads on two cores)
    /// that in-process servers of other tests need.
    static func waitForFile(_ path: String, orExitOf child: ChildProcess, timeout: Duration) async -> Bool {
        await FileWait.appears(path, within: timeout, orExitOf: child)
    }

    /// Reads one line from `fd` (a pipe), up to `timeout`.
    static func readLine(from fd: Int32, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, !wait(for: [fd], timeout: left).isEmpty else { return nil }
            guard read(fd, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

extension ChildProcess {
    /// Waits until `condition` holds, looking again at each change of `path` (its log, say),
    /// until `timeout`: true once it holds, false at the deadline or when this process has
    /// exited first (an exit writes nothing to the file, so its exit wakes the wait too).
    public func waitUntil(changesOf path: String, timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let watch = FileEvents.shared.watch(path, for: UInt32(IN_MODIFY))
        defer { if let watch { FileEvents.shared.release(watch) } }
        while true {
            // Counted first, then looked at: a change in between wakes the wait.
            let seen = watch.map(FileEvents.shared.count) ?? 0
            if condition() { return true }
            guard ContinuousClock.now < deadline, !hasExited else { return false }
            await FileEvents.shared.wait(watch, after: seen, orReadable: exitFD, until: deadline)
        }
    }
}

/// Watches for a path to appear: the deepest directory of it that exists so far, re-armed one
/// level deeper as directories appear.
struct FileAppearance {
    let path: String
    private var watched: (directory: String, watch: FileEvents.Watch?)?

    init(path: String) { self.path = path }

    /// Whether the path exists; if not, the watch to wait on and its count before the look
    /// (a creation between the look and the wait wakes the wait).
    mutating func look() -> (exists: Bool, watch: FileEvents.Watch?, seen: UInt64) {
        var directory = (path as NSString).deletingLastPathComponent
        while !FileManager.default.fileExists(atPath: directory), directory != "/" {
            directory = (directory as NSString).deletingLastPathComponent
        }
        if watched?.directory != directory {
            release()
            watched = (directory, FileEvents.shared.watch(directory, for: UInt32(IN_CREATE | IN_MOVED_TO)))
        }
        let watch = watched?.watch
        let seen = watch.map(FileEvents.shared.count) ?? 0
        return (FileManager.default.fileExists(atPath: path), watch, seen)
    }

    mutating func release() {
        if let watch = watched?.watch { FileEvents.shared.release(watch) }
        watched = nil
    }
}

/// Waiting for a path to appear, without a process to watch beside it.
public enum FileWait {
    /// Whether `path` exists within `timeout` (inotify on its deepest existing directory);
    /// false at once when `child` exits first.
    public static func appears(_ path: String, within timeout: Duration, orExitOf child: ChildProcess? = nil) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        var appearance = FileAppearance(path: path)
        defer { appearance.release() }
        while true {
            let look = appearance.look()
            if look.exists { return true }
            guard ContinuousClock.now < deadline, child?.hasExited != true else { return false }
            await FileEvents.shared.wait(look.watch, after: look.seen, orReadable: child?.exitFD, until: deadline)
        }
    }
}
