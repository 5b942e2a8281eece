import CEarshotLinux
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own that sleeps in poll(2) on one descriptor and an eventfd, and calls
/// `onReadable` each time the descriptor is readable. `stop()` makes the eventfd readable and
/// joins the thread: on Linux, closing a descriptor another thread is blocked on does not wake
/// it (and the number can be reused meanwhile), so the owner closes its descriptor only after
/// `stop()` returned. The watched descriptor belongs to the caller; the eventfd to this.
final class PollThread: Sendable {
    private let wake: FileDescriptor
    private let thread: Mutex<pthread_t?>

    /// Starts the thread. `name` (up to 15 bytes) names it in `ps -L` and /proc.
    convenience init(watching descriptor: Int32, name: String, onReadable: @escaping @Sendable () -> Void) throws(SystemError) {
        try self.init(watching: descriptor, name: name, untilEnd: false) { _ in
            onReadable()
            return true
        }
    }

    /// For a descriptor that can end (a socket whose peer goes away): `onReady` runs when the
    /// descriptor is readable and also when poll reports only an error or a hang-up, so the
    /// owner reads the end or the error and reports it; it returns false to end the thread
    /// (`stop()` then just joins it). `hungUp` says poll reported POLLHUP, POLLERR or POLLNVAL:
    /// a read that finds nothing then is the end, not a spurious wake-up.
    convenience init(watchingUntilEnd descriptor: Int32, name: String, onReady: @escaping @Sendable (_ hungUp: Bool) -> Bool) throws(SystemError) {
        try self.init(watching: descriptor, name: name, untilEnd: true, onReady: onReady)
    }

    private init(watching descriptor: Int32, name: String, untilEnd: Bool, onReady: @escaping @Sendable (_ hungUp: Bool) -> Bool) throws(SystemError) {
        let wake = try FileDescriptor(rawValue: retryingOnInterrupt("eventfd") { CEarshotLinux_eventfd() })
        let body = Body(descriptor: descriptor, wake: wake.rawValue, name: name, untilEnd: untilEnd, onReady: onReady)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(body).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            _ = try? wake.close()
            throw SystemError("pthread_create", errno: Errno(rawValue: created))
        }
        self.wake = wake
        self.thread = Mutex(thread)
    }

    deinit { stop() }

    /// Wakes the thread and waits until it has ended. Safe to call twice; never from
    /// `onReadable` (a thread cannot join itself).
    func stop() {
        guard let thread = self.thread.withLock({ thread in
            defer { thread = nil }
            return thread
        }) else { return }
        // Cannot fail: only a counter overflow would, and one write cannot make one.
        _ = CEarshotLinux_eventfd_signal(wake.rawValue)
        precondition(pthread_equal(thread, pthread_self()) == 0, "a watcher stopped from its own callback")
        pthread_join(thread, nil)
        _ = try? wake.close()
    }

    /// What the thread runs; it closes nothing.
    private final class Body {
        let descriptor: Int32
        let wake: Int32
        let name: String
        let untilEnd: Bool
        let onReady: @Sendable (_ hungUp: Bool) -> Bool

        init(descriptor: Int32, wake: Int32, name: String, untilEnd: Bool, onReady: @escaping @Sendable (_ hungUp: Bool) -> Bool) {
            self.descriptor = descriptor
            self.wake = wake
            self.name = name
            self.untilEnd = untilEnd
            self.onReady = onReady
        }

        func run() {
            _ = CEarshotLinux_set_thread_name(name)
            while true {
                var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                if poll(&descriptors, 2, -1) < 0 {
                    if Errno.current == .interrupted { continue }
                    return
                }
                if descriptors[1].revents != 0 { return }
                // POLLERR, POLLHUP, POLLNVAL without data: the end, which only `untilEnd` reports.
                let events = descriptors[0].revents
                guard events & Int16(POLLIN) != 0 || untilEnd else { return }
                if !onReady(events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0) { return }
            }
        }
    }
}

/// The calling thread.
public enum CurrentThread {
    /// Names the calling thread for `ps -L` and /proc (cut to 15 bytes). A Linux thread
    /// otherwise keeps the name of the thread that created it.
    public static func setName(_ name: String) {
        _ = CEarshotLinux_set_thread_name(name)
    }
}
