import SystemBridge

/// Where the daemon keeps its state by default: the daemon's state file, and beside it the
/// rolling recordings `earshot record --since` reads (so the client finds them without the
/// daemon).
public enum StateLocation {
    /// No place for the state file: neither variable names one and the user database gives no
    /// home directory.
    public struct Missing: Error, Sendable, CustomStringConvertible {
        public var uid: UInt32
        /// Why the user database gave none (its entry has no home; or the lookup failed).
        public var detail: String

        public var description: String {
            "no place for the state file: XDG_STATE_HOME and HOME are not set (or not absolute paths) and \(detail); set XDG_STATE_HOME or HOME, or start with --state FILE (Earshot never falls back to a shared directory such as /tmp)"
        }
    }

    /// `$XDG_STATE_HOME/earshot/state.json`, else `$HOME/.local/state/earshot/state.json`, else
    /// the same under the home directory the user database gives the real user (`passwdHome`:
    /// getpwuid_r, for a daemon started without HOME). A variable counts only when it is an
    /// absolute path (XDG's rule). Never a shared directory: with no home at all this throws.
    public static func defaultPath(
        environment: [String: String], uid: UInt32 = CurrentProcess.userID,
        passwdHome: () throws -> String? = { try CurrentProcess.passwdHomeDirectory() }
    ) throws(Missing) -> String {
        func absolute(_ value: String?) -> String? {
            guard let value, value.hasPrefix("/") else { return nil }
            return value
        }
        if let base = absolute(environment["XDG_STATE_HOME"]) { return "\(base)/earshot/state.json" }
        let home: String
        if let variable = absolute(environment["HOME"]) {
            home = variable
        } else {
            let found: String?
            do {
                found = try passwdHome()
            } catch {
                throw Missing(uid: uid, detail: "the user database cannot be read (\(error))")
            }
            guard let found = absolute(found) else {
                throw Missing(uid: uid, detail: "the user database gives uid \(uid) no home directory")
            }
            home = found
        }
        return "\(home == "/" ? "" : home)/.local/state/earshot/state.json"
    }
}
