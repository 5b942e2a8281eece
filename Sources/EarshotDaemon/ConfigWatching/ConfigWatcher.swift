import SystemBridge

/// Calls `onChange` when one of `paths` is written, created, replaced (editors rename over
/// the file), renamed away or deleted, and on SIGHUP: a `FileChangeWatcher` on the files'
/// directories and a `SignalWatcher` for SIGHUP. A directory that does not exist yet is
/// watched through its nearest existing ancestor until it does, and a watched directory
/// deleted or moved away is watched again from where its path now leads; `onWatch` is told
/// each time where a path is watched from (at start, and each time that moves), for the log.
/// SIGHUP also re-arms a watch whose directory changed unseen. Neither watcher can fail short
/// of the process running out of descriptors or threads; if one does, the other still works
/// and the failure is kept for the log.
public final class ConfigWatcher: Sendable {
    private let files: FileChangeWatcher?
    private let hangUp: SignalWatcher?
    /// Why the files are not watched (inotify could not be set up): SIGHUP still reloads.
    public let fileWatchFailure: SystemError?
    /// Why SIGHUP does not reload (the handler could not be installed).
    public let signalFailure: SystemError?
    /// Watched paths for which no directory could be watched (inotify refused each one up to
    /// the root): a change there is not seen until SIGHUP places the watch.
    public var unwatchedPaths: [String] { files?.unwatched ?? [] }
    /// Where each path is watched from now.
    public var watching: [FileChangeWatcher.Watching] { files?.watching ?? [] }

    /// No `paths` (a config read once, from a pipe): only SIGHUP is watched.
    public init(
        paths: [String], onWatch: @escaping @Sendable (FileChangeWatcher.Watching) -> Void = { _ in },
        onChange: @escaping @Sendable (String) -> Void
    ) {
        var files: FileChangeWatcher?
        do {
            if !paths.isEmpty {
                files = try FileChangeWatcher(paths: paths, threadName: "earshot-config", onWatch: onWatch) { onChange("\($0) changed") }
            }
            fileWatchFailure = nil
        } catch {
            fileWatchFailure = error
        }
        self.files = files
        do {
            hangUp = try SignalWatcher([.hangUp], threadName: "earshot-sighup") { [files] _ in
                files?.refresh()
                onChange("SIGHUP")
            }
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
