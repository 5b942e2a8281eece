import SystemBridge

/// Calls `onChange` when one of `paths` is written, created, replaced (editors rename over
/// the file) or deleted, and on SIGHUP: a `FileChangeWatcher` on the files' directories and a
/// `SignalWatcher` for SIGHUP. Neither can fail short of the process running out of
/// descriptors or threads; if one does, the other still works and the failure is kept for
/// the log.
public final class ConfigWatcher: Sendable {
    private let files: FileChangeWatcher?
    private let hangUp: SignalWatcher?
    /// Why the files are not watched (inotify could not be set up): SIGHUP still reloads.
    public let fileWatchFailure: SystemError?
    /// Why SIGHUP does not reload (the handler could not be installed).
    public let signalFailure: SystemError?
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
        do {
            hangUp = try SignalWatcher([.hangUp], threadName: "earshot-sighup") { _ in onChange("SIGHUP") }
            signalFailure = nil
        } catch {
            hangUp = nil
            signalFailure = error
        }
    }

    /// Stops watching: returns once the file watcher's thread has ended; no `onChange` starts
    /// after that for a file change.
    public func stop() {
        hangUp?.stop()
        files?.stop()
    }
}
