import CEarshotLinux
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Calls `onChange` when one of `paths` is written and closed, created, renamed over (as
/// editors save) or deleted. inotify on each file's directory, read by one thread of its own
/// that sleeps in poll(2): no polling loop, no timer.
///
/// `stop()` wakes that thread through an eventfd, joins it, and only then closes the
/// descriptors: closing a descriptor another thread is blocked on does not wake it on Linux,
/// and its number could be handed to the next open meanwhile. After `stop()` returns the
/// thread is gone and no `onChange` runs any more.
public final class FileChangeWatcher: Sendable {
    /// The paths whose directory could not be watched (it does not exist): a change there is
    /// not seen until the watcher is made again.
    public let unwatched: [String]
    private let inotify: FileDescriptor
    private let wake: FileDescriptor
    private let thread: Mutex<pthread_t?>

    /// Starts watching. `threadName` (up to 15 bytes) names the reader thread in `ps -L`.
    public init(
        paths: [String], threadName: String = "earshot-watch", onChange: @escaping @Sendable (String) -> Void
    ) throws(SystemError) {
        let inotify = try FileDescriptor(rawValue: retryingOnInterrupt("inotify_init1") { CEarshotLinux_inotify_init() })
        let wake: FileDescriptor
        do throws(SystemError) {
            wake = try FileDescriptor(rawValue: retryingOnInterrupt("eventfd") { CEarshotLinux_eventfd() })
        } catch {
            _ = try? inotify.close()
            throw error
        }
        var watched: [Int32: (directory: String, names: Set<String>)] = [:]
        var unwatched: [String] = []
        for path in paths {
            let file = FilePath(path)
            let directory = file.removingLastComponent().isEmpty ? "." : file.removingLastComponent().string
            guard let name = file.lastComponent?.string else { continue }
            let watch = CEarshotLinux_inotify_watch_directory(inotify.rawValue, directory)
            guard watch >= 0 else {
                unwatched.append(path)
                continue
            }
            watched[watch, default: (directory, [])].names.insert(name)
        }
        self.inotify = inotify
        self.wake = wake
        self.unwatched = unwatched
        let reader = Reader(inotify: inotify.rawValue, wake: wake.rawValue, watched: watched, name: threadName, onChange: onChange)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(reader).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Reader>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Reader>.fromOpaque(context).release()
            _ = try? inotify.close()
            _ = try? wake.close()
            throw SystemError("pthread_create", errno: Errno(rawValue: created))
        }
        self.thread = Mutex(thread)
    }

    deinit { stop() }

    /// Wakes the reader thread, waits until it has ended, then closes the descriptors. Safe to
    /// call twice. From `onChange` itself (the reader thread) it only tells the thread to end.
    public func stop() {
        guard let thread = self.thread.withLock({ thread in
            defer { thread = nil }
            return thread
        }) else { return }
        // Cannot fail on an eventfd short of the counter overflowing, which one write cannot do.
        _ = CEarshotLinux_eventfd_signal(wake.rawValue)
        if pthread_equal(thread, pthread_self()) != 0 {
            // The reader stops itself: it ends after this change; nobody joins it.
            pthread_detach(thread)
            return
        }
        pthread_join(thread, nil)
        _ = try? inotify.close()
        _ = try? wake.close()
    }

    /// The reader thread's state; it owns nothing, the watcher closes the descriptors.
    private final class Reader {
        let inotify: Int32
        let wake: Int32
        let watched: [Int32: (directory: String, names: Set<String>)]
        let name: String
        let onChange: @Sendable (String) -> Void

        init(inotify: Int32, wake: Int32, watched: [Int32: (directory: String, names: Set<String>)], name: String,
             onChange: @escaping @Sendable (String) -> Void) {
            self.inotify = inotify
            self.wake = wake
            self.watched = watched
            self.name = name
            self.onChange = onChange
        }

        func run() {
            _ = CEarshotLinux_set_thread_name(name)
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 {
                    if Errno.current == .interrupted { continue }
                    return
                }
                if descriptors[1].revents != 0 { return }
                guard descriptors[0].revents & Int16(POLLIN) != 0 else { return }  // POLLERR/POLLNVAL
                if let changed = drain(into: &buffer) { onChange(changed) }
            }
        }

        /// Reads every queued event; the last watched path among them, if any.
        private func drain(into buffer: inout [UInt8]) -> String? {
            var changed: String?
            while true {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                guard count > 0 else { return changed }  // EAGAIN: all read (the descriptor is non-blocking)
                buffer.withUnsafeBytes { raw in
                    var offset = 0
                    var watch: Int32 = 0
                    var name: UnsafePointer<CChar>?
                    while true {
                        let next = CEarshotLinux_inotify_next(raw.baseAddress, count, offset, &watch, &name)
                        guard next > 0 else { break }
                        offset = next
                        guard let entry = watched[watch], let name else { continue }
                        let file = String(cString: name)
                        if entry.names.contains(file) { changed = "\(entry.directory)/\(file)" }
                    }
                }
            }
        }
    }
}
