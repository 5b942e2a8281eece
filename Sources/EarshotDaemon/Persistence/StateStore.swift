import WireFields
import AudioGraph
import ControlProtocol
import FoundationEssentials
import RoutingPolicy
import SystemBridge
import SystemPackage

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
    /// Since 0.4: the streams held silent when the state was saved (docs/policy.md §7).
    public var held: [HeldStream] = []
    /// Since 0.4: session-manager keys (WirePlumber's saved stream Props) that may still carry a
    /// mute of Earshot's from streams held before a crash and gone since.
    public var mutedKeys: Set<String> = []

    public init(
        registrations: [AccessoryRegistration] = [], history: [HistoryEntry] = [], choices: [AudioDirection: Choice] = [:], held: [HeldStream] = [],
        mutedKeys: Set<String> = []
    ) {
        self.mutedKeys = mutedKeys
        self.registrations = registrations
        self.history = history
        self.choices = choices
        self.held = held
    }
}

/// Reads and writes the state file. Writes are atomic (a temp file in the same directory,
/// fsync, rename), so a crash leaves the old file or the new one, never half of one.
public struct StateStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The state directory is not the user's own: refused at start (docs/state-file.md).
    public struct UnsafeDirectory: Error, Sendable, Equatable, CustomStringConvertible {
        public var directory: String
        public var problem: String

        public init(directory: String, problem: String) {
            self.directory = directory
            self.problem = problem
        }

        public var description: String {
            "the state directory \(directory) \(problem); another user could plant registrations in it or read the state: refusing to use it (fix it, or start with --state FILE in a directory of your own)"
        }
    }

    /// The directory of the state file.
    public var directory: String { FilePath(path).removingLastComponent().string }

    /// Makes sure the state file's directory is the user's own before anything is read from it
    /// or written to it: created when missing (mode 0700, and so are the missing directories
    /// above it), then refused when it is not a directory, is not owned by the real user id
    /// (`uid`), or is writable by its group or by others. Symbolic links are followed (the
    /// directory they lead to is checked). A directory that cannot be created is not refused
    /// here: saves then fail, and say why (`status`), as any save that fails.
    public func prepareDirectory(uid: UInt32 = CurrentProcess.userID) throws(UnsafeDirectory) {
        let directory = self.directory.isEmpty ? "." : self.directory
        var status = try? FileSystem.status(of: directory)
        if status == nil {
            try? FileSystem.createDirectory(directory, permissions: 0o700)
            status = try? FileSystem.status(of: directory)
        }
        guard let status else { return }
        if let problem = Self.problem(with: status, uid: uid) { throw UnsafeDirectory(directory: directory, problem: problem) }
    }

    /// What is wrong with a state directory, if anything: not a directory, owned by another
    /// user, writable by group or others.
    public static func problem(with status: FileSystem.Status, uid: UInt32) -> String? {
        guard status.type == .directory else { return "is \(status.type), not a directory" }
        guard status.owner == uid else { return "is owned by uid \(status.owner), not by this user (uid \(uid))" }
        let writable = status.permissions & 0o022
        guard writable == 0 else {
            let who = writable == 0o022 ? "its group and others" : writable == 0o020 ? "its group" : "others"
            return "is writable by \(who) (mode 0\(String(status.permissions, radix: 8)); it should be 0700)"
        }
        return nil
    }

    /// The saved state; a missing file is an empty state. One that cannot be read (corrupt, of
    /// an unknown version, a field wrong) throws a `StateFileError` naming the file and the
    /// field, and one the system cannot read throws its `SystemError` (`read …: Input/output
    /// error (EIO)`), so the daemon can warn and start clean. The schema is `StateFile`'s.
    public func load() throws -> PersistedState {
        guard let bytes = try FileSystem.contents(of: path) else { return PersistedState() }
        return try StateFile.decode(Data(bytes), path: path)
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
            throw SystemError("rename", path: path, detail: "a directory is where the state file should be", code: Errno.isDirectory.rawValue)
        }
        let data = try StateFile.encode(state, reusing: &cache)
        let directory = FilePath(path).removingLastComponent().string
        if try FileSystem.entry(at: directory) == nil { try FileSystem.createDirectory(directory, permissions: 0o700) }
        try FileSystem.atomicWrite(data, to: path, permissions: 0o600)
    }

    /// A save's failure as one line: a `SystemError`'s own text, anything else described.
    static func reason(_ error: any Error) -> String {
        if let error = error as? SystemError { return error.description }
        return "\(error)"
    }
}
