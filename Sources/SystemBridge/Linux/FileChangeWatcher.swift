import CEarshotLinux
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Calls `onChange` when one of `paths` is written and closed, created, renamed over (as
/// editors save), renamed away or deleted. inotify on each file's directory, read by one thread
/// of its own that sleeps in poll(2): no polling loop, no timer.
///
/// A directory that does not exist is watched through its nearest existing ancestor, for the
/// next missing component only: as the components appear the watch moves down, and once the
/// file's own directory exists it is watched (and a change reported, since the file may be
/// there already). When a watched directory is deleted or moved away (IN_DELETE_SELF,
/// IN_MOVE_SELF, IN_IGNORED) the watch is placed again from the nearest existing ancestor, and
/// a change reported. Each placement is reported to `onWatch`; `refresh()` (on SIGHUP) places
/// again any watch whose directory is no longer what its path names. Every step is driven by
/// an event: nothing is retried on a timer.
///
/// `stop()` wakes that thread through an eventfd, joins it, and only then closes the
/// descriptors: closing a descriptor another thread is blocked on does not wake it on Linux,
/// and its number could be handed to the next open meanwhile. After `stop()` returns the
/// thread is gone and no `onChange` runs any more.
public final class FileChangeWatcher: Sendable {
    /// Where one path is watched from.
    public struct Watching: Sendable, Equatable, CustomStringConvertible {
        /// The file.
        public var path: String
        /// The file's directory.
        public var directory: String
        /// The directory watched: `directory` itself, or while it does not exist its nearest
        /// existing ancestor; nil when nothing could be watched (`failure` says why).
        public var watched: String?
        public var failure: SystemError?

        /// The file's own directory is watched: a change of the file is seen.
        public var isDirect: Bool { watched == directory }

        var name: String { FilePath(path).lastComponent?.string ?? path }

        /// `watching /home/u/.config/earshot for earshot.toml`,
        /// `/home/u/.config/earshot does not exist: watching /home/u/.config until it does (for earshot.toml)`.
        public var description: String {
            guard let watched else {
                return "cannot watch \(directory) for \(name) (\(failure.map(\.description) ?? "no directory"))"
            }
            if watched == directory { return "watching \(directory) for \(name)" }
            return "\(directory) does not exist: watching \(watched) until it does (for \(name))"
        }
    }

    private let inotify: FileDescriptor
    private let thread: PollThread
    private let stopped = Mutex(false)
    private let state: Targets

    /// Starts watching. `threadName` (up to 15 bytes) names the reader thread in `ps -L`.
    /// `onWatch` is told where each path is watched from: here for every path (before this
    /// returns), then each time a watch moves.
    public init(
        paths: [String], threadName: String = "earshot-watch",
        onWatch: @escaping @Sendable (Watching) -> Void = { _ in },
        onChange: @escaping @Sendable (String) -> Void
    ) throws(SystemError) {
        let inotify = try FileDescriptor(rawValue: retryingOnInterrupt("inotify_init1") { CEarshotLinux_inotify_init() })
        let state = Targets(inotify: inotify.rawValue, paths: paths, onWatch: onWatch, onChange: onChange)
        state.armAll()
        do throws(SystemError) {
            thread = try PollThread(watching: inotify.rawValue, name: threadName) { state.drain() }
        } catch {
            _ = try? inotify.close()
            throw error
        }
        self.inotify = inotify
        self.state = state
    }

    deinit { stop() }

    /// The paths nothing could be watched for (inotify refused every directory up to the root:
    /// no permission, or the user's watch limit reached): a change there is not seen until
    /// `refresh()` places the watch.
    public var unwatched: [String] { state.watching.filter { $0.watched == nil }.map(\.path) }

    /// Where each path is watched from now.
    public var watching: [Watching] { state.watching }

    /// Places again every watch whose directory is not the one its path names now (moved or
    /// replaced without an event reaching this watcher, or refused before); reports each move
    /// to `onWatch` and no change (the caller reads the files anyway). For SIGHUP: a reload
    /// also re-arms the watcher.
    public func refresh() {
        guard !stopped.withLock({ $0 }) else { return }
        state.refresh()
    }

    /// Waits until the reader thread has ended, then closes the inotify descriptor. Safe to
    /// call twice; never from `onChange` (the thread cannot wait for itself).
    public func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        thread.stop()
        state.close()
        _ = try? inotify.close()
    }
}

/// The watched paths and their watches, shared by the reader thread (events) and `refresh()`
/// (SIGHUP): every change under one lock, the callbacks outside it.
private final class Targets: Sendable {
    struct Target {
        var path: String
        /// The file's directory, then each ancestor up to the root (or `.` for a relative path).
        var chain: [String]
        var name: String
        /// The watch and the level of `chain` it is on, with the identity of that directory.
        var watch: Int32?
        var level = 0
        var identity: FileSystem.Identity?
        var failure: SystemError?

        var watching: FileChangeWatcher.Watching {
            FileChangeWatcher.Watching(
                path: path, directory: chain[0], watched: watch == nil ? nil : chain[level], failure: failure)
        }
    }

    struct State {
        var targets: [Target]
        /// How many targets hold each watch (two paths in one directory share it).
        var holders: [Int32: Int] = [:]
        var closed = false
    }

    /// What a change of state means for the callbacks, run once the lock is let go.
    struct Reports {
        var watching: [FileChangeWatcher.Watching] = []
        var changed: String?
    }

    let inotify: Int32
    let state: Mutex<State>
    let onWatch: @Sendable (FileChangeWatcher.Watching) -> Void
    let onChange: @Sendable (String) -> Void

    init(
        inotify: Int32, paths: [String], onWatch: @escaping @Sendable (FileChangeWatcher.Watching) -> Void,
        onChange: @escaping @Sendable (String) -> Void
    ) {
        self.inotify = inotify
        self.onWatch = onWatch
        self.onChange = onChange
        let targets = paths.compactMap { path -> Target? in
            let file = FilePath(path)
            guard let name = file.lastComponent?.string else { return nil }
            return Target(path: path, chain: Self.chain(of: file.removingLastComponent()), name: name)
        }
        state = Mutex(State(targets: targets))
    }

    /// `directory`, then each ancestor: `/a/b` → `/a/b`, `/a`, `/`; `a/b` → `a/b`, `a`, `.`.
    static func chain(of directory: FilePath) -> [String] {
        var chain: [String] = []
        var current = directory
        while true {
            let text = current.isEmpty ? "." : current.string
            if chain.last == text { break }
            chain.append(text)
            if current.isEmpty { break }
            current = current.removingLastComponent()
        }
        return chain
    }

    var watching: [FileChangeWatcher.Watching] { state.withLock { $0.targets.map(\.watching) } }

    /// Places every watch (at start) and reports where.
    func armAll() {
        let reports = state.withLock { state in
            var reports = Reports()
            for index in state.targets.indices { reports.watching.append(arm(index, in: &state)) }
            return reports
        }
        deliver(reports)
    }

    func refresh() {
        let reports = state.withLock { state -> Reports in
            var reports = Reports()
            guard !state.closed else { return reports }
            // No change is reported: the caller reloads anyway.
            for index in state.targets.indices where !isCurrent(state.targets[index]) {
                reports.watching.append(arm(index, in: &state))
            }
            return reports
        }
        deliver(reports)
    }

    /// Every watch removed: after the thread has ended, before the descriptor is closed.
    func close() {
        state.withLock { state in
            state.closed = true
            for watch in state.holders.keys { _ = inotify_rm_watch(inotify, watch) }
            state.holders = [:]
        }
    }

    /// Reads the queued events of the non-blocking inotify descriptor and acts on them: the
    /// thread's work on each wake-up.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return }  // EAGAIN: all read
            var events: [(watch: Int32, kind: Int, name: String)] = []
            buffer.withUnsafeBytes { raw in
                var offset = 0
                var watch: Int32 = 0
                var kind: Int32 = 0
                var name: UnsafePointer<CChar>?
                while true {
                    let next = CEarshotLinux_inotify_next(raw.baseAddress, count, offset, &watch, &kind, &name)
                    guard next > 0 else { break }
                    offset = next
                    events.append((watch, Int(kind), name.map { String(cString: $0) } ?? ""))
                }
            }
            let reports = state.withLock { state -> Reports in
                var reports = Reports()
                guard !state.closed else { return reports }
                for event in events { handle(event, in: &state, reports: &reports) }
                return reports
            }
            deliver(reports)
        }
    }

    private func handle(_ event: (watch: Int32, kind: Int, name: String), in state: inout State, reports: inout Reports) {
        switch event.kind {
        case Int(CEarshotLinux_inotify_overflow):
            // Events were lost: every watch is checked, and every path may have changed.
            for index in state.targets.indices {
                if !isCurrent(state.targets[index]) { reports.watching.append(arm(index, in: &state)) }
                if state.targets[index].watch != nil, state.targets[index].level == 0 { reports.changed = state.targets[index].path }
            }
        case Int(CEarshotLinux_inotify_self_gone), Int(CEarshotLinux_inotify_removed):
            // The watched directory is gone (or moved: the watch would follow it, so it is
            // dropped): each path on it is watched again from where it now leads.
            guard state.holders[event.watch] != nil else { return }  // a watch dropped already
            state.holders[event.watch] = nil
            _ = inotify_rm_watch(inotify, event.watch)
            for index in state.targets.indices where state.targets[index].watch == event.watch {
                let wasDirect = state.targets[index].level == 0
                state.targets[index].watch = nil
                let watching = arm(index, in: &state)
                reports.watching.append(watching)
                if wasDirect || watching.isDirect { reports.changed = watching.path }
            }
        default:
            for index in state.targets.indices where state.targets[index].watch == event.watch {
                let target = state.targets[index]
                if target.level == 0 {
                    if event.name == target.name { reports.changed = target.path }
                } else if event.name == FilePath(target.chain[target.level - 1]).lastComponent?.string {
                    // The next missing directory appeared (or went again): move down as far as
                    // exists now.
                    let watching = arm(index, in: &state)
                    if watching.watched != target.watching.watched { reports.watching.append(watching) }
                    if watching.isDirect { reports.changed = watching.path }
                }
            }
        }
    }

    /// The target's watch is on the deepest directory of its chain that exists now.
    private func isCurrent(_ target: Target) -> Bool {
        guard target.watch != nil else { return false }
        for level in target.chain.indices {
            guard let status = try? FileSystem.status(of: target.chain[level]), status.type == .directory else { continue }
            return level == target.level && status.identity == target.identity
        }
        return false
    }

    /// Places the watch of `state.targets[index]` on the deepest directory of its chain that
    /// exists: inotify_add_watch from the file's directory up, past the ones missing (ENOENT,
    /// ENOTDIR); then, if a deeper one appeared meanwhile (between the look and the watch), down
    /// again. Bounded: a few steps per level, however the directories flap.
    private func arm(_ index: Int, in state: inout State) -> FileChangeWatcher.Watching {
        let chain = state.targets[index].chain
        let previous = state.targets[index].watch
        var placed: (watch: Int32, level: Int)?
        var failure: SystemError?
        var level = 0
        for _ in 0..<(chain.count * 4 + 4) {
            let watch = CEarshotLinux_inotify_watch_directory(inotify, chain[level])
            if watch < 0 {
                let error = Errno.current
                if (error == .noSuchFileOrDirectory || error == .notDirectory), level + 1 < chain.count {
                    level += 1
                    continue
                }
                if placed == nil { failure = SystemError("inotify_add_watch", path: chain[level], errno: error) }
                break
            }
            if let earlier = placed, earlier.watch != watch { dropIfUnheld(earlier.watch, in: &state) }
            placed = (watch, level)
            failure = nil
            // The next directory down exists now: it appeared after it was looked for.
            guard level > 0, let below = try? FileSystem.status(of: chain[level - 1]), below.type == .directory else { break }
            level -= 1
        }
        if let placed {
            state.holders[placed.watch, default: 0] += 1
            state.targets[index].watch = placed.watch
            state.targets[index].level = placed.level
            state.targets[index].identity = (try? FileSystem.status(of: chain[placed.level]))?.identity
            state.targets[index].failure = nil
        } else {
            state.targets[index].watch = nil
            state.targets[index].failure = failure
        }
        if let previous { release(previous, in: &state) }
        return state.targets[index].watching
    }

    /// One holder fewer; the last one removes the watch.
    private func release(_ watch: Int32, in state: inout State) {
        guard let held = state.holders[watch] else { return }
        if held > 1 {
            state.holders[watch] = held - 1
        } else {
            state.holders[watch] = nil
            _ = inotify_rm_watch(inotify, watch)
        }
    }

    /// A watch placed on the way and not kept: removed unless another path holds it.
    private func dropIfUnheld(_ watch: Int32, in state: inout State) {
        if state.holders[watch] == nil { _ = inotify_rm_watch(inotify, watch) }
    }

    private func deliver(_ reports: Reports) {
        for watching in reports.watching { onWatch(watching) }
        if let changed = reports.changed { onChange(changed) }
    }
}
