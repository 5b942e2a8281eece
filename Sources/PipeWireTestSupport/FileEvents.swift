import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The test process's one inotify instance, and the one thread that waits on it.
///
/// A user has 128 inotify instances machine-wide (`fs.inotify.max_user_instances`), shared
/// with every sandbox's dbus-daemon and earshot daemon; a test process that took one per wait
/// ran out with many tests at once ("inotify_init1: Too many open files"). Here every wait
/// shares one instance: a watch is counted per path (added with `IN_MASK_ADD`, removed with
/// its last holder), each event advances its watch's count, and a waiter is woken when the
/// count passes what it had seen, when a descriptor it names becomes readable (a child's exit
/// pipe), or at its deadline.
///
/// The thread runs `poll(2)` on the inotify descriptor, a pipe that announces new waiters,
/// and the waiters' descriptors; waiters are resumed on that thread.
public final class FileEvents: @unchecked Sendable {
    public static let shared = FileEvents()

    /// A path being watched; give it back with `release`.
    public struct Watch: Sendable, Hashable {
        fileprivate let descriptor: Int32
    }

    private struct Waiter {
        let watch: Watch?
        let seen: UInt64
        let readable: Int32?
        let deadline: ContinuousClock.Instant
        let resume: @Sendable () -> Void
    }

    private let inotify: Int32
    /// A pipe whose write end announces a new waiter (its deadline and descriptor) to the thread.
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var holders: [Int32: Int] = [:]
    private var counts: [Int32: UInt64] = [:]
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0

    private init() {
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        precondition(inotify >= 0, "FileEvents: inotify_init1: \(String(cString: strerror(errno)))")
        wake = ChildProcess.makePipe()
        for end in [wake.read, wake.write] { _ = fcntl(end, F_SETFL, O_NONBLOCK) }
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "file-events"
        thread.start()
    }

    /// Watches `path` for `mask` (`IN_MODIFY`, `IN_CREATE | IN_MOVED_TO`, …); nil when the
    /// path does not exist.
    public func watch(_ path: String, for mask: UInt32) -> Watch? {
        lock.withLock {
            let descriptor = inotify_add_watch(inotify, path, mask | UInt32(IN_MASK_ADD))
            guard descriptor >= 0 else { return nil }
            holders[descriptor, default: 0] += 1
            return Watch(descriptor: descriptor)
        }
    }

    /// Gives a watch back; the path stops being watched when its last holder has.
    public func release(_ watch: Watch) {
        lock.withLock {
            guard let held = holders[watch.descriptor] else { return }
            if held > 1 {
                holders[watch.descriptor] = held - 1
            } else {
                holders[watch.descriptor] = nil
                counts[watch.descriptor] = nil
                _ = inotify_rm_watch(inotify, watch.descriptor)
            }
        }
    }

    /// How many events the watch has had: read it before looking at the file, then wait past it,
    /// so that a change in between is never missed.
    public func count(_ watch: Watch) -> UInt64 {
        lock.withLock { counts[watch.descriptor, default: 0] }
    }

    /// Returns when `watch` has had an event after `seen`, `readable` can be read, or at `deadline`.
    public func wait(_ watch: Watch?, after seen: UInt64, orReadable readable: Int32? = nil, until deadline: ContinuousClock.Instant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            add(Waiter(watch: watch, seen: seen, readable: readable, deadline: deadline) { continuation.resume() })
        }
    }

    /// `wait`, blocking the calling thread (for callers that are not async).
    public func waitBlocking(_ watch: Watch?, after seen: UInt64, orReadable readable: Int32? = nil, until deadline: ContinuousClock.Instant) {
        let done = DispatchSemaphore(value: 0)
        add(Waiter(watch: watch, seen: seen, readable: readable, deadline: deadline) { done.signal() })
        done.wait()
    }

    private func add(_ waiter: Waiter) {
        let satisfied = lock.withLock { () -> Bool in
            if let watch = waiter.watch, counts[watch.descriptor, default: 0] > waiter.seen { return true }
            waiters[nextWaiter] = waiter
            nextWaiter += 1
            return false
        }
        if satisfied { waiter.resume() } else { var byte: UInt8 = 1; _ = Glibc.write(wake.write, &byte, 1) }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let (descriptors, timeout) = lock.withLock { () -> ([Int32], Int32) in
                let now = ContinuousClock.now
                let nearest = waiters.values.map(\.deadline).min()
                let millis = nearest.map { deadline -> Int32 in
                    let left = now.duration(to: deadline)
                    guard left > .zero else { return 0 }
                    return Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
                } ?? -1
                return (Array(Set(waiters.values.compactMap(\.readable))), millis)
            }
            var polled = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                + descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polled, nfds_t(polled.count), timeout)
            var drained = [UInt8](repeating: 0, count: 256)
            while Glibc.read(wake.read, &drained, drained.count) > 0 {}
            let events = readEvents(into: &buffer)
            let ready = Set(polled.dropFirst(2).filter { $0.revents != 0 }.map(\.fd))
            let woken = lock.withLock { () -> [Waiter] in
                for descriptor in events { counts[descriptor, default: 0] += 1 }
                let now = ContinuousClock.now
                let due = waiters.filter { _, waiter in
                    if let watch = waiter.watch, counts[watch.descriptor, default: 0] > waiter.seen { return true }
                    if let readable = waiter.readable, ready.contains(readable) { return true }
                    return waiter.deadline <= now
                }
                for key in due.keys { waiters[key] = nil }
                return Array(due.values)
            }
            for waiter in woken { waiter.resume() }
        }
    }

    /// The watch descriptor of every event waiting on the inotify descriptor.
    private func readEvents(into buffer: inout [UInt8]) -> [Int32] {
        var descriptors: [Int32] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return descriptors }
            var offset = 0
            buffer.withUnsafeBytes { bytes in
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    descriptors.append(event.wd)
                    offset += MemoryLayout<inotify_event>.size + Int(event.len)
                }
            }
        }
    }
}

extension PipeWireSandbox {
    /// Waits until the file at `path` says what `predicate` wants (read afresh after each
    /// write or rename in its directory: atomic writers rename into place); returns its text.
    public func waitForContents(of path: String, timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async throws -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let events = FileEvents.shared
        let watch = events.watch(directory, for: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE))
        defer { watch.map(events.release) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let seen = watch.map(events.count) ?? 0
            if let text = try? String(contentsOfFile: path, encoding: .utf8), predicate(text) { return text }
            guard ContinuousClock.now < deadline else { throw FixtureError("\(path) did not say what was waited for within \(timeout)") }
            await events.wait(watch, after: seen, until: deadline)
        }
    }
}
