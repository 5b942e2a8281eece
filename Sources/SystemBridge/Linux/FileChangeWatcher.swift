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
    private let thread: PollThread
    private let stopped = Mutex(false)

    /// Starts watching. `threadName` (up to 15 bytes) names the reader thread in `ps -L`.
    public init(
        paths: [String], threadName: String = "earshot-watch", onChange: @escaping @Sendable (String) -> Void
    ) throws(SystemError) {
        let inotify = try FileDescriptor(rawValue: retryingOnInterrupt("inotify_init1") { CEarshotLinux_inotify_init() })
        var watched: [Int32: Directory] = [:]
        var unwatched: [String] = []
        for path in paths {
            let file = FilePath(path)
            let parent = file.removingLastComponent()
            let directory = parent.isEmpty ? "." : parent.string
            guard let name = file.lastComponent?.string else { continue }
            let watch = CEarshotLinux_inotify_watch_directory(inotify.rawValue, directory)
            guard watch >= 0 else {
                unwatched.append(path)
                continue
            }
            watched[watch, default: Directory(path: directory, names: [])].names.insert(name)
        }
        let reader = Reader(inotify: inotify.rawValue, watched: watched)
        do throws(SystemError) {
            thread = try PollThread(watching: inotify.rawValue, name: threadName) {
                if let changed = reader.drain() { onChange(changed) }
            }
        } catch {
            _ = try? inotify.close()
            throw error
        }
        self.inotify = inotify
        self.unwatched = unwatched
    }

    deinit { stop() }

    /// Waits until the reader thread has ended, then closes the inotify descriptor. Safe to
    /// call twice; never from `onChange` (the thread cannot wait for itself).
    public func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        thread.stop()
        _ = try? inotify.close()
    }

    struct Directory: Sendable {
        var path: String
        var names: Set<String>
    }

    /// Reads the queued events of the non-blocking inotify descriptor; the thread's only state.
    private final class Reader: Sendable {
        let inotify: Int32
        let watched: [Int32: Directory]

        init(inotify: Int32, watched: [Int32: Directory]) {
            self.inotify = inotify
            self.watched = watched
        }

        /// Every queued event read; the last watched path among them, if any.
        func drain() -> String? {
            var buffer = [UInt8](repeating: 0, count: 8192)
            var changed: String?
            while true {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                guard count > 0 else { return changed }  // EAGAIN: all read
                buffer.withUnsafeBytes { raw in
                    var offset = 0
                    var watch: Int32 = 0
                    var name: UnsafePointer<CChar>?
                    while true {
                        let next = CEarshotLinux_inotify_next(raw.baseAddress, count, offset, &watch, &name)
                        guard next > 0 else { break }
                        offset = next
                        guard let directory = watched[watch], let name else { continue }
                        let file = String(cString: name)
                        if directory.names.contains(file) { changed = "\(directory.path)/\(file)" }
                    }
                }
            }
        }
    }
}
