import AudioGraph
import Foundation
import RoutingPolicy
import SystemBridge

/// What survives a restart: registrations (as the register requests that recreate them) and
/// the history of chosen defaults. Kept in `$XDG_STATE_HOME/earshot/state.json`.
public struct PersistedState: Sendable, Equatable {
    public struct HistoryEntry: Sendable, Equatable, Codable {
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

    private struct File: Codable {
        var version: Int
        var registrations: [JSONValue]
        var history: [PersistedState.HistoryEntry]
    }

    /// The saved state; a missing file is an empty state. A corrupt one is reported in the
    /// error so the daemon can warn and start clean.
    public func load() throws -> PersistedState {
        guard let data = FileManager.default.contents(atPath: path) else { return PersistedState() }
        let file = try JSONDecoder().decode(File.self, from: data)
        var state = PersistedState(history: file.history)
        for body in file.registrations {
            guard case .register(let identity, let reporter, let configuration) = try AccessoryRequestDecoder.register(body).get() else { continue }
            state.registrations.append(AccessoryRegistration(identity: identity, reporter: reporter, configuration: configuration, registeredAt: 0))
        }
        return state
    }

    public func save(_ state: PersistedState) throws {
        let registrations = state.registrations.map { registration -> JSONValue in
            var fields = ControlWire.configuration(registration.configuration)
            fields["accessory"] = .string(registration.identity.description)
            fields["reporter"] = .string(registration.reporter)
            return .object(fields)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data = try encoder.encode(File(version: 1, registrations: registrations, history: Array(state.history.suffix(PersistedState.historyLimit))))
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileSystem.atomicWrite(data, to: path, permissions: 0o600)
    }
}
