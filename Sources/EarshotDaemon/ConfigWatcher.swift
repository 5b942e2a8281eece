import SystemBridge

/// Calls `onChange` when one of `paths` is written, created, replaced (editors rename over
/// the file) or deleted, and on SIGHUP: a `FileChangeWatcher` on the files' directories and a
/// `SignalWatcher` for SIGHUP.
public final class ConfigWatcher: Sendable {
    private let files: FileChangeWatcher?
    private let hangUp: SignalWatcher
    /// Why the files are not watched (inotify could not be set up): SIGHUP still reloads.
    public let fileWatchFailure: SystemError?
    /// Watched paths whose directory does not exist: a change there is not seen.
    public var unwatchedPaths: [String] { files?.unwatched ?? [] }

    public init(paths: [String], onChange: @escaping @Sendable (String) -> Void) {
        do {
            files = try FileChangeWatcher(paths: paths, threadName: "earshot-config") { onChange("\($0) changed") }
            fileWatchFailure = nil
        } catch {
            files = nil
            fileWatchFailure = error
        }
        hangUp = SignalWatcher([.hangUp]) { _ in onChange("SIGHUP") }
    }

    /// Stops watching: returns once the file watcher's thread has ended; no `onChange` starts
    /// after that for a file change.
    public func stop() {
        hangUp.stop()
        files?.stop()
    }
}
