import AudioGraph
import Foundation
import RoutingPolicy
import SystemBridge

/// What survives a restart: registrations and the history of chosen defaults. Kept in
/// `$XDG_STATE_HOME/earshot/state.json`, in the schema of `StateFile` (docs/state-file.md).
public struct PersistedState: Sendable, Equatable {
    public struct HistoryEntry: Sendable, Equatable {
        /// Wall clock, milliseconds since the Unix epoch.
        public var at: Int64
        public var current: String?
        public var previous: String?
        public var reason: String

        public init(at: Int64, current: String?, previous: String?, reason: String) {
            self.at = at
            self.current = current
            self.previous = previous
            self.reason = reason
        }
    }

    public static let historyLimit = 100
    public var registrations: [AccessoryRegistration] = []
    public var history: [HistoryEntry] = []

    public init(registrations: [AccessoryRegistration] = [], history: [HistoryEntry] = []) {
        self.registrations = registrations
        self.history = history
    }
}

/// Reads and writes the state file. Writes are atomic (a temp file in the same directory,
/// fsync, rename), so a crash leaves the old file or the new one, never half of one.
public struct StateStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public static func defaultPath(environment: [String: String]) -> String {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "\(environment["HOME"] ?? "/tmp")/.local/state"
        return "\(base)/earshot/state.json"
    }

    /// The saved state; a missing file is an empty state. One that cannot be read (corrupt, of
    /// an unknown version, a field wrong) throws a `StateFileError` naming the file and the
    /// field, so the daemon can warn and start clean. The schema is `StateFile`'s.
    public func load() throws -> PersistedState {
        guard let data = FileManager.default.contents(atPath: path) else { return PersistedState() }
        return try StateFile.decode(data, path: path)
    }

    public func save(_ state: PersistedState) throws {
        let data = try StateFile.encode(state)
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileSystem.atomicWrite(data, to: path, permissions: 0o600)
    }
}
