/// Which config applies: `--config`, then `$XDG_CONFIG_HOME/earshot/earshot.toml`, then
/// `/etc/earshot/earshot.toml`, else the built-in defaults. File existence is asked of the
/// caller, and the caller reads the file, so the choice itself stays pure: callers ask whether
/// anything is at the path (SystemBridge's `InputFile.nameExists`, lstat), so a symbolic link
/// whose target is missing or that loops is chosen, and reported as unreadable, rather than
/// silently passed over for the next file or the built-in defaults.
public enum ConfigSource: Sendable, Hashable, CustomStringConvertible {
    case file(String)
    case builtIn

    public static let systemPath = "/etc/earshot/earshot.toml"

    /// The candidate paths in search order (the explicit one, if given, is the only one).
    public static func candidates(explicit: String?, environment: [String: String]) -> [String] {
        if let explicit { return [explicit] }
        var paths: [String] = []
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            paths.append("\(xdg)/earshot/earshot.toml")
        } else if let home = environment["HOME"], !home.isEmpty {
            // The XDG default when the variable is unset.
            paths.append("\(home)/.config/earshot/earshot.toml")
        }
        paths.append(systemPath)
        return paths
    }

    /// An explicit path is used even when missing, so the error names it.
    public static func resolve(explicit: String?, environment: [String: String], fileExists: (String) -> Bool) -> ConfigSource {
        if let explicit { return .file(explicit) }
        return candidates(explicit: nil, environment: environment).first(where: fileExists).map { .file($0) } ?? .builtIn
    }

    public var description: String {
        switch self {
        case .file(let path): path
        case .builtIn: "built-in defaults"
        }
    }
}
