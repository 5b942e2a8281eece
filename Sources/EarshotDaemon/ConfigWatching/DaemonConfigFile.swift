import RoutingPolicy
import SystemBridge

/// How the daemon reads its config, at start and on every reload (docs/policy.md,
/// "Configuration"):
///
/// - The file is found as everywhere (`--config`, then the XDG path, then /etc), but a name
///   that is there and cannot be read — a symbolic link whose target is missing or that
///   loops, a file without permission — is an error, never a reason to fall back to the next
///   file or to the built-in defaults.
/// - A file found by searching, and every file on reload, must be a regular file: it is
///   stat'ed before it is opened (a FIFO, a device, a socket or a directory is refused
///   unopened), opened non-blocking, and refused by its size over
///   `PolicyConfigLoader.sizeLimit` (16 MiB) before anything is read. So whatever is put at the
///   path can neither block the daemon nor fill its memory.
/// - An explicit `--config` that is a pipe, a FIFO or a device (`<(…)`, `/dev/stdin`), or `-`,
///   is read once at start, as asked (up to the limit, blocking until its writer closes it):
///   such a config cannot be read a second time, so a reload keeps it (`readOnce` says from
///   what) instead of reading an empty pipe as the built-in defaults.
public struct DaemonConfigFile: Sendable {
    public let source: ConfigSource
    public let config: PolicyConfig
    /// What an explicit `--config` read once at start was (`standard input`, `a pipe`): it is
    /// never read again. nil for a file that is re-read on reload.
    public let readOnce: String?

    /// The config at start.
    public static func atStart(options: DaemonOptions) throws(ConfigErrors) -> DaemonConfigFile {
        let source = resolve(options)
        guard case .file(let path) = source else { return DaemonConfigFile(source: source, config: .builtIn, readOnce: nil) }
        if options.configPath != nil, let stream = try streamKind(path) {
            let bytes: [UInt8]
            do {
                bytes = try FileSystem.readStream(path, limit: PolicyConfigLoader.sizeLimit)
            } catch {
                throw PolicyConfigLoader.unreadable(InputFile.name(path), reason(error))
            }
            return DaemonConfigFile(source: source, config: try PolicyConfigLoader.parse(bytes, file: InputFile.name(path)), readOnce: stream)
        }
        return DaemonConfigFile(source: source, config: try readRegular(path, onReload: false), readOnce: nil)
    }

    /// The config a reload finds now: only ever a regular file (or the built-in defaults when
    /// no file is there any more).
    public static func reload(options: DaemonOptions) throws(ConfigErrors) -> (ConfigSource, PolicyConfig) {
        let source = resolve(options)
        guard case .file(let path) = source else { return (source, .builtIn) }
        return (source, try readRegular(path, onReload: true))
    }

    /// `--config`, else the first search path where anything is (lstat), else built-in.
    static func resolve(_ options: DaemonOptions) -> ConfigSource {
        ConfigSource.resolve(explicit: options.configPath, environment: options.environment, fileExists: InputFile.nameExists)
    }

    /// What an explicit path is when it is to be read as a stream: `-`, or anything that is
    /// neither a regular file nor a directory once links are followed. nil for a regular file
    /// (and for a directory or a missing file, which the regular read reports).
    private static func streamKind(_ path: String) throws(ConfigErrors) -> String? {
        if path == "-" { return "standard input" }
        let status: FileSystem.Status?
        do {
            status = try FileSystem.status(of: path)
        } catch {
            throw PolicyConfigLoader.unreadable(path, FileSystem.ReadError.system(error).reason)
        }
        switch status?.type {
        case nil, .regular?, .directory?: return nil
        case .fifo?: return "a pipe"
        case let other?: return other.description
        }
    }

    private static func readRegular(_ path: String, onReload: Bool) throws(ConfigErrors) -> PolicyConfig {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readRegularFile(path, limit: PolicyConfigLoader.sizeLimit)
        } catch {
            var text = reason(error)
            if case .notRegular(_, let type) = error, type != .directory {
                text += onReload
                    ? " (a reload reads only a regular file: the last good config stays)"
                    : " (only a file given with --config may be a pipe or a FIFO)"
            }
            throw PolicyConfigLoader.unreadable(path, text)
        }
        return try PolicyConfigLoader.parse(bytes, file: path)
    }

    /// The reason as the rest of Earshot words it: the system's (`No such file or directory`,
    /// `Is a directory`, `Too many levels of symbolic links`), or the type or size refused.
    private static func reason(_ error: FileSystem.ReadError) -> String {
        if case .tooLarge(_, let size, let limit) = error { return InputFile.tooLarge(size: size, limit: limit) }
        return error.reason
    }
}
