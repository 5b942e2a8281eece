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
        /// The output (the default sink) or the input (the default source, §8).
        public var direction: AudioDirection

        public init(at: Int64, current: String?, previous: String?, reason: String, direction: AudioDirection = .output) {
            self.direction = direction
            self.at = at
            self.current = current
            self.previous = previous
            self.reason = reason
        }
    }

    /// The user's choices of one side (the output's sink, the input's source): the last one
    /// picked by hand, and the pick that held as the override when the state was saved.
    public struct Choice: Sendable, Equatable {
        public var lastChoice: String?
        public var override: String?

        public init(lastChoice: String? = nil, override: String? = nil) {
            self.lastChoice = lastChoice
            self.override = override
        }

        public var isEmpty: Bool { lastChoice == nil && override == nil }
    }

    public static let historyLimit = 100
    public var registrations: [AccessoryRegistration] = []
    public var history: [HistoryEntry] = []
    /// Since version 2: each side's choices (empty from a version 1 file).
    public var choices: [AudioDirection: Choice] = [:]

    public init(registrations: [AccessoryRegistration] = [], history: [HistoryEntry] = [], choices: [AudioDirection: Choice] = [:]) {
        self.registrations = registrations
        self.history = history
        self.choices = choices
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

    /// Writes `state`. Every failure is a `SystemError` naming the call, the path and the
    /// errno (`open …/state.json.tmp-42: Permission denied (EACCES)`), including a directory
    /// where the file should be.
    public func save(_ state: PersistedState) throws {
        var cache = StateFile.FragmentCache()
        try save(state, reusing: &cache)
    }

    /// `save`, reusing the bytes of registrations unchanged since the save that filled `cache`.
    public func save(_ state: PersistedState, reusing cache: inout StateFile.FragmentCache) throws {
        if try FileSystem.entry(at: path)?.kind == .directory {
            throw SystemError("rename", path: path, detail: "a directory is where the state file should be", code: EISDIR)
        }
        let data = try StateFile.encode(state, reusing: &cache)
        let directory = (path as NSString).deletingLastPathComponent
        if try FileSystem.entry(at: directory) == nil {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Self.systemError(error, call: "mkdir", path: directory)
            }
        }
        try FileSystem.atomicWrite(data, to: path, permissions: 0o600)
    }

    /// A save's failure as one line: a `SystemError`'s own text, anything else described.
    static func reason(_ error: any Error) -> String {
        if let error = error as? SystemError { return error.description }
        return "\(error)"
    }

    /// Foundation's file errors carry the errno underneath: named as SystemBridge names it.
    static func systemError(_ error: any Error, call: String, path: String) -> any Error {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            return SystemError(call, path: path, code: Int32(truncatingIfNeeded: underlying.code))
        }
        return SystemError(call, path: path, detail: (error as NSError).localizedDescription, code: EIO)
    }
}
