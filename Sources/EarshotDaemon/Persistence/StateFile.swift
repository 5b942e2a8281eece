import WireFields
import AudioGraph
import ControlProtocol
import FoundationEssentials
import RoutingPolicy

/// The state file's own schema (docs/state-file.md), versioned apart from the control protocol:
/// a change to the socket's JSON never changes what is on disk, and a change to the disk format
/// is a new `version` that this reader either knows or refuses by name.
///
/// Version 1 is the format Earshot 0.1 to 0.3 wrote; its registrations have the field names of a
/// register request, but they are spelled here, not borrowed from the wire types. Version 2
/// (Earshot 0.4) adds the input (§8): history entries of the default source carry
/// `"direction": "input"`, and `choices` keeps each side's last choice and override.
public enum StateFile {
    /// The version this Earshot writes, and the newest it reads.
    public static let currentVersion = 2

    /// The file's bytes for `state`: the current version, pretty-printed, keys sorted, history
    /// capped at `PersistedState.historyLimit` (the newest kept).
    public static func encode(_ state: PersistedState) throws -> Data {
        var choices: [String: Version1.Choice] = [:]
        for direction in AudioDirection.allCases {
            choices[direction.rawValue] = Version1.Choice(state.choices[direction] ?? PersistedState.Choice())
        }
        let file = Version1(
            version: currentVersion, registrations: state.registrations.map(Version1.Registration.init),
            history: state.history.suffix(PersistedState.historyLimit).map(Version1.HistoryEntry.init), choices: choices,
            held: state.held.isEmpty ? nil : state.held.prefix(StreamHolds.limit).map(Version1.Held.init),
            mutedKeys: state.mutedKeys.isEmpty ? nil : state.mutedKeys.sorted().prefix(StreamHolds.limit).map { $0 })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    /// Each registration's bytes as `encode` writes them, kept from one save to the next.
    public typealias FragmentCache = [AccessoryIdentity: (registration: AccessoryRegistration, bytes: Data)]

    /// Exactly `encode(state)`, byte for byte, but a registration unchanged since the save that
    /// filled `cache` is not encoded again: its bytes are reused. A save then costs encoding
    /// what changed plus copying the rest, not encoding every registration.
    public static func encode(_ state: PersistedState, reusing cache: inout FragmentCache) throws -> Data {
        guard !state.registrations.isEmpty else {
            cache = [:]
            return try encode(state)
        }
        var skeleton = state
        skeleton.registrations = []
        var text = try encode(skeleton)
        // With no registrations the encoder writes this, once (keys are sorted, and a string
        // value cannot contain it unescaped).
        guard let range = text.firstRange(of: Data("\"registrations\" : [\n\n  ]".utf8)) else { return try encode(state) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var next = FragmentCache(minimumCapacity: state.registrations.count)
        var body = Data("\"registrations\" : [\n".utf8)
        for (index, registration) in state.registrations.enumerated() {
            let bytes: Data
            if let cached = cache[registration.identity], cached.registration == registration {
                bytes = cached.bytes
            } else {
                bytes = indented(try encoder.encode(Version1.Registration(registration)), by: 4)
            }
            next[registration.identity] = (registration, bytes)
            if index > 0 { body.append(contentsOf: ",\n".utf8) }
            body.append(bytes)
        }
        body.append(contentsOf: "\n  ]".utf8)
        cache = next
        text.replaceSubrange(range, with: body)
        return text
    }

    /// Pretty-printed JSON moved right by `spaces` (empty lines stay empty), as the encoder
    /// nests it.
    private static func indented(_ data: Data, by spaces: Int) -> Data {
        var out = Data()
        out.reserveCapacity(data.count + data.count / 8)
        let pad = [UInt8](repeating: 0x20, count: spaces)
        var atLineStart = true
        for byte in data {
            if atLineStart, byte != 0x0A { out.append(contentsOf: pad) }
            out.append(byte)
            atLineStart = byte == 0x0A
        }
        return out
    }

    /// The state in `data`, read from the file at `path` (named in errors). Refuses a file that
    /// is empty, not JSON, of an unknown version, or with a field it cannot read; the error says
    /// which field (`registrations[1].placement`) and what is wrong with it.
    public static func decode(_ data: Data, path: String) throws(StateFileError) -> PersistedState {
        guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw StateFileError(path: path, field: nil, problem: "the file is empty")
        }
        let version = try decoding(data, path: path) { try JSONDecoder().decode(Header.self, from: data).version }
        switch version {
        case 1:
            // Version 1 defines neither directions nor choices: whatever else is there is ignored.
            let file = try decoding(data, path: path) { try JSONDecoder().decode(Version1.self, from: data) }
            return PersistedState(
                registrations: file.registrations.map(\.registration),
                history: file.history.map { var entry = $0.entry; entry.direction = .output; return entry })
        case 2:
            let file = try decoding(data, path: path) { try JSONDecoder().decode(Version1.self, from: data) }
            var choices: [AudioDirection: PersistedState.Choice] = [:]
            for (key, choice) in file.choices ?? [:] {
                guard let direction = AudioDirection(rawValue: key) else {
                    throw StateFileError(path: path, field: "choices.\(key)", problem: "unknown direction: expected output or input")
                }
                let restored = PersistedState.Choice(lastChoice: choice.lastChoice, override: choice.override)
                if !restored.isEmpty { choices[direction] = restored }
            }
            var held: [HeldStream] = []
            for (index, entry) in (file.held ?? []).prefix(StreamHolds.limit).enumerated() {
                guard let accessory = AccessoryIdentity(parsing: entry.accessory) else {
                    throw StateFileError(path: path, field: "held[\(index)].accessory", problem: "malformed accessory \"\(entry.accessory)\": expected a Bluetooth address or a node.name")
                }
                held.append(
                    HeldStream(
                        stream: entry.stream, serial: entry.serial, application: entry.application, name: entry.name, sink: entry.sink,
                        accessory: accessory, key: entry.key))
                held[held.count - 1].player = entry.player
            }
            return PersistedState(
                registrations: file.registrations.map(\.registration), history: file.history.map(\.entry), choices: choices, held: held,
                mutedKeys: Set((file.mutedKeys ?? []).prefix(StreamHolds.limit)))
        case ...0:
            throw StateFileError(path: path, field: "version", problem: "unknown version \(version): this Earshot reads versions 1 to \(currentVersion)")
        default:
            throw StateFileError(
                path: path, field: "version",
                problem: "version \(version) was written by a newer Earshot; this one reads versions 1 to \(currentVersion)", isNewerVersion: true)
        }
    }

    /// Runs a JSONDecoder step, turning its errors into ones that name the field.
    private static func decoding<T>(_ data: Data, path: String, _ body: () throws -> T) throws(StateFileError) -> T {
        do {
            return try body()
        } catch let error as DecodingError {
            throw StateFileError(path: path, error, in: data)
        } catch {
            throw StateFileError(path: path, field: nil, problem: "\(error)")
        }
    }

    /// Just the version, read before the rest so a newer file is refused as newer, not as
    /// whatever field it changed.
    private struct Header: Decodable {
        var version: Int
    }

    /// Version 1: `{"version": 1, "registrations": [...], "history": [...]}`; version 2 the
    /// same with `choices` and `direction` in history entries (one type reads and writes both).
    struct Version1: Codable {
        var version: Int
        var registrations: [Registration]
        var history: [HistoryEntry]
        /// Version 2: `{"output": {"last-choice": …, "override": …}, "input": {…}}`.
        var choices: [String: Choice]?
        /// Version 2, since 0.4 (left out when none): the streams Earshot holds silent, to give
        /// back at the next start if this daemon ends without doing it (a crash).
        var held: [Held]?
        /// Since 0.4 (left out when none): WirePlumber keys that may still carry a mute of a
        /// held stream gone before it was given back.
        var mutedKeys: [String]?

        enum CodingKeys: String, CodingKey {
            case version, registrations, history, choices, held
            case mutedKeys = "muted-keys"
        }

        /// One held stream: `stream` (node id), `serial`, `application`, `name`, `sink`,
        /// `accessory`.
        struct Held: Codable {
            var stream: UInt32
            var serial: UInt64?
            var application: String?
            var name: String?
            var sink: String
            var accessory: String
            var key: String?
            var player: String?

            init(_ held: HeldStream) {
                key = held.key
                player = held.player
                stream = held.stream
                serial = held.serial
                application = held.application
                name = held.name
                sink = held.sink
                accessory = held.accessory.description
            }
        }

        /// Both fields written as null when absent, declared as the protocol's fields are.
        struct Choice: WireRecord {
            var lastChoice: String?
            var override: String?

            init(_ choice: PersistedState.Choice) {
                lastChoice = choice.lastChoice
                override = choice.override
            }

            private init() {}

            static let wireBlank = Choice()
            static let wireFields: [WireField<Choice>] = [
                .nullable("last-choice", \.lastChoice, "the default Earshot chose last"),
                .nullable("override", \.override, "the user's pick in force"),
            ]
        }

        /// One registration: `accessory`, `reporter`, `capabilities`, and `placement`,
        /// `primary-source`, `secondary-source` (written as null when absent).
        struct Registration: Codable {
            var registration: AccessoryRegistration

            init(_ registration: AccessoryRegistration) { self.registration = registration }

            enum CodingKeys: String, CodingKey {
                case accessory, reporter, capabilities, placement
                case primarySource = "primary-source"
                case secondarySource = "secondary-source"
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                let accessory = try container.decode(String.self, forKey: .accessory)
                guard let identity = AccessoryIdentity(parsing: accessory) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .accessory, in: container,
                        debugDescription: "malformed accessory \"\(accessory)\": expected a Bluetooth address (AA:BB:CC:DD:EE:FF) or a node.name")
                }
                let reporter = try container.decode(String.self, forKey: .reporter)
                guard ReporterName.isValid(reporter) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .reporter, in: container, debugDescription: "malformed reporter \"\(reporter)\": expected a reverse-DNS name")
                }
                var capabilities: AccessoryCapabilities = []
                for name in try container.decode([String].self, forKey: .capabilities) {
                    guard let capability = AccessoryCapability(rawValue: name) else {
                        throw DecodingError.dataCorruptedError(
                            forKey: .capabilities, in: container,
                            debugDescription: "unknown capability \"\(name)\": expected \(AccessoryCapability.allCases.map(\.rawValue).joined(separator: " or "))")
                    }
                    capabilities.insert(.of(capability))
                }
                var configuration = AccessoryConfiguration(capabilities: capabilities)
                if let placement = try container.decodeIfPresent(String.self, forKey: .placement) {
                    guard let value = Placement(rawValue: placement) else {
                        throw DecodingError.dataCorruptedError(
                            forKey: .placement, in: container,
                            debugDescription: "unknown placement \"\(placement)\": expected one of \(Placement.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    configuration.placement = value
                }
                configuration.primarySource = try Self.address(container, .primarySource)
                configuration.secondarySource = try Self.address(container, .secondarySource)
                registration = AccessoryRegistration(identity: identity, reporter: reporter, configuration: configuration, registeredAt: 0)
            }

            private static func address(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> BluetoothAddress? {
                guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
                guard let address = BluetoothAddress(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: container, debugDescription: "malformed address \"\(text)\": expected six hex pairs like 11:22:33:44:55:66")
                }
                return address
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                let configuration = registration.configuration
                try container.encode(registration.identity.description, forKey: .accessory)
                try container.encode(registration.reporter, forKey: .reporter)
                try container.encode(configuration.capabilities.names, forKey: .capabilities)
                try container.encode(configuration.placement?.rawValue, forKey: .placement)
                try container.encode(configuration.primarySource?.description, forKey: .primarySource)
                try container.encode(configuration.secondarySource?.description, forKey: .secondarySource)
            }
        }

        /// One chosen default: `at` (wall-clock ms), `reason`, and `current`, `previous`
        /// (left out when none); version 2: `direction` `input` for the default source (left
        /// out for the output).
        struct HistoryEntry: Codable {
            var at: Int64
            var current: String?
            var previous: String?
            var reason: String
            var direction: AudioDirection?

            init(_ entry: PersistedState.HistoryEntry) {
                at = entry.at
                current = entry.current
                previous = entry.previous
                reason = entry.reason
                direction = entry.direction == .input ? .input : nil
            }

            var entry: PersistedState.HistoryEntry {
                PersistedState.HistoryEntry(at: at, current: current, previous: previous, reason: reason, direction: direction ?? .output)
            }
        }
    }
}

/// A state file that cannot be read: which file, which field (`registrations[1].placement`;
/// nil for the file as a whole) and what is wrong.
public struct StateFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var field: String?
    public var problem: String
    /// The file is well-formed as far as this Earshot can tell but of a newer version: it is
    /// kept as it is (and not overwritten), not moved aside as a corrupt one is.
    public var isNewerVersion: Bool

    public init(path: String, field: String?, problem: String, isNewerVersion: Bool = false) {
        self.path = path
        self.field = field
        self.problem = problem
        self.isNewerVersion = isNewerVersion
    }

    public var description: String { "\(path): " + (field.map { "\($0): " } ?? "") + problem }

    init(path: String, _ error: DecodingError, in data: Data) {
        self.path = path
        isNewerVersion = false
        switch error {
        case .keyNotFound(let key, let context):
            field = Self.field(context.codingPath + [key])
            problem = "missing"
        case .typeMismatch(let type, let context):
            field = Self.field(context.codingPath)
            problem = context.codingPath.isEmpty ? "not a JSON object" : "expected \(Self.kind(type))"
        case .valueNotFound(let type, let context):
            field = Self.field(context.codingPath)
            problem = "null, expected \(Self.kind(type))"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            field = nil
            problem = "not JSON" + (JSONSyntaxLocation.locate(data).map { " (\($0))" } ?? "")
        case .dataCorrupted(let context):
            field = Self.field(context.codingPath)
            problem = context.debugDescription
        @unknown default:
            field = nil
            problem = "\(error)"
        }
    }

    /// `registrations[1].placement`.
    private static func field(_ path: [any CodingKey]) -> String? {
        guard !path.isEmpty else { return nil }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "true or false"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}
