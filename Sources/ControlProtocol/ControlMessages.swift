import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// One Codable type per message of the control protocol (docs/control-protocol.md): each field
/// name is spelled once, in its type's CodingKeys, and the server (ControlSession), the D-Bus
/// service (EarshotBusValues) and the CLI (ControlClient, ControlText, StatusText) all go
/// through these types. Values are the wire's own (strings, as the protocol spells them), so a
/// client reads a newer daemon's enum values without failing. Every type writes absent values
/// as null, never leaving a field out (the protocol's rule), and reads null and absent alike.
extension ControlWire {
    /// The keys of the line itself: a reply's `id`, `ok` and `error`, an event's `event`, a
    /// request's `op` and `id`.
    enum LineKey: String, CodingKey {
        case id, ok, error, event, op, record
    }

    // MARK: Replies

    /// `{"id": …, "ok": true, …result}`: the result's fields beside `id` and `ok`.
    public struct Success<Result: Codable & Sendable>: Codable, Sendable {
        /// The request's `id` (nil when it had none: written as null).
        public var id: JSONValue?
        public var result: Result

        public init(id: JSONValue?, _ result: Result) {
            self.id = id
            self.result = result
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: LineKey.self)
            id = try container.decodeIfPresent(JSONValue.self, forKey: .id).flatMap { $0 == .null ? nil : $0 }
            result = try Result(from: decoder)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: LineKey.self)
            try container.encode(id ?? .null, forKey: .id)
            try container.encode(true, forKey: .ok)
            try result.encode(to: encoder)
        }
    }

    /// `{"id": …, "ok": false, "error": {"code": CODE, "message": TEXT}}`.
    public struct Failure: Codable, Sendable {
        public var id: JSONValue?
        public var error: ErrorObject

        public init(id: JSONValue?, _ error: AccessoryError) {
            self.id = id
            self.error = ErrorObject(code: error.code.rawValue, message: error.message)
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: LineKey.self)
            id = try container.decodeIfPresent(JSONValue.self, forKey: .id).flatMap { $0 == .null ? nil : $0 }
            error = try container.decode(ErrorObject.self, forKey: .error)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: LineKey.self)
            try container.encode(id ?? .null, forKey: .id)
            try container.encode(false, forKey: .ok)
            try container.encode(error, forKey: .error)
        }
    }

    /// A refusal's `error`.
    public struct ErrorObject: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
    }

    /// The result of register, update, current and unregister: `accessory` (null after
    /// unregister).
    public struct AccessoryResult: Codable, Sendable, Hashable {
        @NullWhenAbsent public var accessory: Accessory?
        /// A register reply's warnings (always there, `[]` when none): the registration stands
        /// but may not do what was meant (a node.name no sink has). Left out of other replies.
        public var warnings: [String]?
        /// A current reply's reporter (the one that registered the accessory). Left out of
        /// other replies.
        public var reporter: String?
        /// A current reply's driver: the built-in driver reading the device, when one does.
        public var driver: DriverEntry?

        public init(_ accessory: Accessory?, warnings: [String]? = nil, reporter: String? = nil, driver: DriverEntry? = nil) {
            self.accessory = accessory
            self.warnings = warnings
            self.reporter = reporter
            self.driver = driver
        }

        public enum CodingKeys: String, CodingKey { case accessory, warnings, reporter, driver }
    }

    /// The result of list: `accessories`, sorted.
    /// The result of list: `accessories`, sorted, one page of them; `next` is the `after` of
    /// the next page, null on the last.
    public struct ListResult: Codable, Sendable, Hashable {
        public var accessories: [ListedAccessory]
        @NullWhenAbsent public var next: String?

        public init(_ accessories: [ListedAccessory], next: String? = nil) {
            self.accessories = accessories
            self.next = next
        }

        public enum CodingKeys: String, CodingKey { case accessories, next }
    }

    /// The body of list: `after` and `limit`, each left out when not given.
    public struct ListRequest: Encodable, Sendable {
        public var after: String?
        public var limit: Int?
        public init(after: String? = nil, limit: Int? = nil) {
            self.after = after
            self.limit = limit
        }
    }

    /// The result of status: `status`.
    public struct StatusResult: Codable, Sendable {
        public var status: Status
        public init(_ status: Status) { self.status = status }
    }

    /// The result of subscribe: `subscribed` (true).
    public struct SubscribeResult: Codable, Sendable, Hashable {
        public var subscribed: Bool
        public init(subscribed: Bool = true) { self.subscribed = subscribed }
    }

    /// The reply to `record`: the graph as `pw-dump` prints it, when the recording starts. The
    /// recorded lines follow as `{"record": LINE}` messages, each an `earshot eval --events` line.
    public struct RecordResult: Codable, Sendable, Hashable {
        public var graph: JSONValue
        public init(graph: JSONValue) { self.graph = graph }
    }

    /// One recorded input line.
    public struct RecordLine: Codable, Sendable, Hashable {
        public var record: JSONValue
        public init(_ line: JSONValue) { record = line }
    }

    // MARK: Accessories

    /// The four fields an accessory reports: `capabilities`, `placement`, `primary-source`,
    /// `secondary-source`. An accessory event's `configuration`, and part of every accessory
    /// object.
    public struct Configuration: Codable, Sendable, Hashable {
        public var capabilities: [String]
        @NullWhenAbsent public var placement: String?
        @NullWhenAbsent public var primarySource: String?
        @NullWhenAbsent public var secondarySource: String?

        public init(capabilities: [String], placement: String? = nil, primarySource: String? = nil, secondarySource: String? = nil) {
            self.capabilities = capabilities
            self.placement = placement
            self.primarySource = primarySource
            self.secondarySource = secondarySource
        }

        public init(_ configuration: AccessoryConfiguration) {
            capabilities = configuration.capabilities.names
            placement = configuration.placement?.rawValue
            primarySource = configuration.primarySource?.description
            secondarySource = configuration.secondarySource?.description
        }

        public enum CodingKeys: String, CodingKey {
            case capabilities, placement
            case primarySource = "primary-source"
            case secondarySource = "secondary-source"
        }
    }

    /// An accessory object (register, update, current): `accessory` and the configuration's
    /// fields beside it, the fields of a register request less the reporter, so a client can
    /// send it back as it is.
    public struct Accessory: Codable, Sendable, Hashable {
        public var accessory: String
        public var configuration: Configuration

        public init(accessory: String, configuration: Configuration) {
            self.accessory = accessory
            self.configuration = configuration
        }

        public init(_ identity: AccessoryIdentity, _ configuration: AccessoryConfiguration) {
            self.init(accessory: identity.description, configuration: Configuration(configuration))
        }

        public enum CodingKeys: String, CodingKey { case accessory }

        public init(from decoder: any Decoder) throws {
            accessory = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .accessory)
            configuration = try Configuration(from: decoder)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(accessory, forKey: .accessory)
            try configuration.encode(to: encoder)
        }
    }

    /// One entry of list: an accessory object plus `reporter`, `stale` (restored from disk and
    /// not yet confirmed) and `sinks` (the `node.name`s it matches now).
    public struct ListedAccessory: Codable, Sendable, Hashable {
        public var accessory: Accessory
        public var reporter: String
        public var stale: Bool
        public var sinks: [String]
        /// The built-in driver reading the device, when one does.
        public var driver: DriverEntry?

        public init(accessory: Accessory, reporter: String, stale: Bool, sinks: [String], driver: DriverEntry? = nil) {
            self.accessory = accessory
            self.reporter = reporter
            self.stale = stale
            self.sinks = sinks
            self.driver = driver
        }

        public enum CodingKeys: String, CodingKey { case reporter, stale, sinks, driver }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            accessory = try Accessory(from: decoder)
            reporter = try container.decode(String.self, forKey: .reporter)
            stale = try container.decode(Bool.self, forKey: .stale)
            sinks = try container.decode([String].self, forKey: .sinks)
            driver = try container.decodeIfPresent(DriverEntry.self, forKey: .driver)
        }

        public func encode(to encoder: any Encoder) throws {
            try accessory.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(reporter, forKey: .reporter)
            try container.encode(stale, forKey: .stale)
            try container.encode(sinks, forKey: .sinks)
            try container.encodeIfPresent(driver, forKey: .driver)
        }
    }

    // MARK: Status

    /// `status`: how decisions are applied and the latest decision.
    public struct Status: Codable, Sendable {
        /// `cooperative`, `standalone` or `disconnected`.
        public var mode: String
        public var remote: String
        public var connected: Bool
        @NullWhenAbsent public var sessionManager: String?
        /// The session manager's version, when its client publishes one (WirePlumber 0.5+).
        @NullWhenAbsent public var sessionManagerVersion: String?
        /// The latest decision (nil before the first), as `earshot eval --format json` prints it.
        @NullWhenAbsent public var decision: DecisionObject?
        public var subscribers: Int
        public var hostAddresses: [HostAddressEntry]
        /// `ok`, or `not saved (REASON)` while registrations and history cannot be saved.
        @NullWhenAbsent public var state: String?
        /// The built-in drivers' devices; `[]` from a daemon older than them.
        @EmptyWhenAbsent public var drivers: [DriverEntry]
        /// Measurements for the bench (docs/performance.md), not a stable interface; null from a
        /// daemon older than them.
        @NullWhenAbsent public var diagnostics: Diagnostics?

        public init(
            mode: String, remote: String, connected: Bool, sessionManager: String?, sessionManagerVersion: String?, decision: DecisionObject?,
            subscribers: Int, hostAddresses: [HostAddressEntry], state: String?, drivers: [DriverEntry], diagnostics: Diagnostics? = nil
        ) {
            self.diagnostics = diagnostics
            self.mode = mode
            self.remote = remote
            self.connected = connected
            self.sessionManager = sessionManager
            self.sessionManagerVersion = sessionManagerVersion
            self.decision = decision
            self.subscribers = subscribers
            self.hostAddresses = hostAddresses
            self.state = state
            self.drivers = drivers
        }

        public enum CodingKeys: String, CodingKey {
            case mode, remote, connected, decision, subscribers, state
            case sessionManager = "session-manager"
            case sessionManagerVersion = "session-manager-version"
            case hostAddresses = "host-addresses"
            case drivers, diagnostics
        }
    }

    /// `status`'s `diagnostics`: what the bench reads of the daemon's own timing.
    public struct Diagnostics: Codable, Sendable, Hashable {
        /// Earshot's own span of the last switches control requests caused (at most 16, oldest
        /// first).
        public var switchSpans: [SwitchSpanEntry]

        public init(switchSpans: [SwitchSpanEntry]) { self.switchSpans = switchSpans }

        public enum CodingKeys: String, CodingKey {
            case switchSpans = "switch-spans"
        }
    }

    /// One switch a control request caused, as CLOCK_MONOTONIC nanoseconds (the clock every
    /// process shares): the request line read off the socket, the write of
    /// `default.configured.audio.sink` it caused handed to libpipewire, and that write's echo
    /// (PipeWire reporting the value back) taken by the daemon.
    public struct SwitchSpanEntry: Codable, Sendable, Hashable {
        public var read: UInt64
        public var sent: UInt64
        public var echo: UInt64

        public init(read: UInt64, sent: UInt64, echo: UInt64) {
            self.read = read
            self.sent = sent
            self.echo = echo
        }

        public enum CodingKeys: String, CodingKey {
            case read = "read-ns"
            case sent = "sent-ns"
            case echo = "echo-ns"
        }
    }

    /// One device a built-in driver drives, in `status`.
    public struct DriverEntry: Codable, Sendable, Hashable {
        public var address: String
        /// `aap` or `galaxy-buds`.
        public var family: String
        public var name: String?
        /// `connecting`, `connected`, `held`, `unreachable`, `unavailable`, `yielded`, `failed`.
        public var connection: String
        public var problem: String?
        /// Battery percentages by part (`left`, `right`, `case`, `headset`); absent when unknown.
        public var battery: [String: Int]?
        /// When the last packet came (ISO 8601), if any did.
        public var lastPacket: String?
        public var packets: Int
        /// Packets or frames skipped (unknown, malformed, bad CRC, oversized).
        public var skipped: Int

        public enum CodingKeys: String, CodingKey {
            case address, family, name, connection, problem, battery, packets, skipped
            case lastPacket = "last-packet"
        }

        public init(
            address: String, family: String, name: String?, connection: String, problem: String?, battery: [String: Int]?, lastPacket: String?,
            packets: Int, skipped: Int
        ) {
            self.address = address
            self.family = family
            self.name = name
            self.connection = connection
            self.problem = problem
            self.battery = battery
            self.lastPacket = lastPacket
            self.packets = packets
            self.skipped = skipped
        }
    }

    /// The decision object of `status`. Its shape is `DecisionRecord`'s (RoutingPolicy, what
    /// `earshot eval --format json` prints): the daemon writes the record itself; a client,
    /// which cannot rebuild a record from JSON, reads it as JSON.
    public enum DecisionObject: Codable, Sendable {
        case record(DecisionRecord)
        case json(JSONValue)

        public init(from decoder: any Decoder) throws {
            self = .json(try JSONValue(from: decoder))
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .record(let record): try record.encode(to: encoder)
            case .json(let value): try value.encode(to: encoder)
            }
        }

        /// The object as a client reads it (a record is encoded into JSONValue directly): for
        /// the D-Bus service's `explanation`, rendered from what a client would read.
        public var json: JSONValue {
            switch self {
            case .json(let value): value
            case .record(let record): (try? ControlWire.jsonValue(of: record)) ?? .null
            }
        }
    }

    /// One of this host's Bluetooth addresses in use: `address` and `from` (where it came from:
    /// `config`, `bluez hci0`).
    public struct HostAddressEntry: Codable, Sendable, Hashable {
        public var address: String
        public var from: [String]

        public init(address: String, from: [String]) {
            self.address = address
            self.from = from
        }

        public init(_ host: HostAddress) {
            self.init(address: host.address.description, from: host.origins.map(\.description))
        }
    }

    // MARK: Events

    /// An event line: `event` (its name) and the event's fields beside it.
    public enum Event: Codable, Sendable, Hashable {
        case routeChange(RouteChangeEvent)
        case accessory(AccessoryEvent)
        case playback(PlaybackEvent)
        case hostAddresses(HostAddressesEvent)
        /// An event this client does not know (from a newer daemon): its name and whole object.
        case other(name: String, JSONValue)

        /// The `event` field: `route-change`, `accessory`, `playback`, `host-addresses`.
        public var name: String {
            switch self {
            case .routeChange: RouteChangeEvent.name
            case .accessory: AccessoryEvent.name
            case .playback: PlaybackEvent.name
            case .hostAddresses: HostAddressesEvent.name
            case .other(let name, _): name
            }
        }

        public init(from decoder: any Decoder) throws {
            let name = try decoder.container(keyedBy: LineKey.self).decode(String.self, forKey: .event)
            switch name {
            case RouteChangeEvent.name: self = .routeChange(try RouteChangeEvent(from: decoder))
            case AccessoryEvent.name: self = .accessory(try AccessoryEvent(from: decoder))
            case PlaybackEvent.name: self = .playback(try PlaybackEvent(from: decoder))
            case HostAddressesEvent.name: self = .hostAddresses(try HostAddressesEvent(from: decoder))
            default: self = .other(name: name, try JSONValue(from: decoder))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            if case .other(_, let value) = self { return try value.encode(to: encoder) }
            var container = encoder.container(keyedBy: LineKey.self)
            try container.encode(name, forKey: .event)
            switch self {
            case .routeChange(let event): try event.encode(to: encoder)
            case .accessory(let event): try event.encode(to: encoder)
            case .playback(let event): try event.encode(to: encoder)
            case .hostAddresses(let event): try event.encode(to: encoder)
            case .other: break
            }
        }
    }

    /// `route-change`: the default output changed — another sink, or a jack on the default — or,
    /// with `direction` `input` (0.4), the default source (§8).
    public struct RouteChangeEvent: Codable, Sendable, Hashable {
        public static let name = "route-change"
        /// Wall-clock milliseconds since the Unix epoch.
        public var at: Int64
        public var reason: String
        @NullWhenAbsent public var previous: String?
        @NullWhenAbsent public var current: String?
        @NullWhenAbsent public var accessory: String?
        public var summary: String
        /// Added in 0.3: the port (active route description) before and after, when the
        /// sink's device says; null otherwise.
        @NullWhenAbsent public var previousPort: String?
        @NullWhenAbsent public var port: String?
        /// Added in 0.3: the jack or port event that made the change (`{"kind": "unplugged" |
        /// "plugged", "sink": NODE, "port": DESCRIPTION}`), else null.
        @NullWhenAbsent public var portEvent: PortEventField?
        /// Added in 0.4: `output` (the default sink; every route change before 0.4) or `input`
        /// (the default source: `previous`, `current`, the ports and `port-event.sink` then
        /// name sources). Absent from an older daemon's events: read as `output`.
        public var direction: String

        public struct PortEventField: Codable, Sendable, Hashable {
            public var kind: String
            public var sink: String
            public var port: String

            public init(kind: String, sink: String, port: String) {
                self.kind = kind
                self.sink = sink
                self.port = port
            }
        }

        public init(
            at: Int64, reason: String, previous: String?, current: String?, accessory: String?, summary: String, previousPort: String?, port: String?,
            portEvent: PortEventField?, direction: String
        ) {
            self.at = at
            self.reason = reason
            self.previous = previous
            self.current = current
            self.accessory = accessory
            self.summary = summary
            self.previousPort = previousPort
            self.port = port
            self.portEvent = portEvent
            self.direction = direction
        }

        public enum CodingKeys: String, CodingKey {
            case at, reason, previous, current, accessory, summary
            case previousPort = "previous-port", port, portEvent = "port-event", direction
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            at = try container.decode(Int64.self, forKey: .at)
            reason = try container.decode(String.self, forKey: .reason)
            previous = try container.decodeIfPresent(String.self, forKey: .previous)
            current = try container.decodeIfPresent(String.self, forKey: .current)
            accessory = try container.decodeIfPresent(String.self, forKey: .accessory)
            summary = try container.decode(String.self, forKey: .summary)
            previousPort = try container.decodeIfPresent(String.self, forKey: .previousPort)
            port = try container.decodeIfPresent(String.self, forKey: .port)
            portEvent = try container.decodeIfPresent(PortEventField.self, forKey: .portEvent)
            direction = try container.decodeIfPresent(String.self, forKey: .direction) ?? AudioDirection.output.rawValue
        }
    }

    /// `accessory`: a registration changed.
    public struct AccessoryEvent: Codable, Sendable, Hashable {
        public static let name = "accessory"
        public var at: Int64
        /// `registered`, `updated`, `unregistered` or `invalidated`.
        public var change: String
        public var accessory: String
        @NullWhenAbsent public var reporter: String?
        /// The fields afterwards (nil once the registration ended).
        @NullWhenAbsent public var configuration: Configuration?

        public init(at: Int64, change: String, accessory: String, reporter: String?, configuration: Configuration?) {
            self.at = at
            self.change = change
            self.accessory = accessory
            self.reporter = reporter
            self.configuration = configuration
        }

        public enum CodingKeys: String, CodingKey { case at, change, accessory, reporter, configuration }
    }

    /// `playback`: Earshot paused or resumed MPRIS players.
    public struct PlaybackEvent: Codable, Sendable, Hashable {
        public static let name = "playback"
        public var at: Int64
        /// `paused` or `resumed`.
        public var action: String
        public var reason: String
        public var players: [String]
        @NullWhenAbsent public var sink: String?
        @NullWhenAbsent public var accessory: String?

        public init(at: Int64, action: String, reason: String, players: [String], sink: String?, accessory: String?) {
            self.at = at
            self.action = action
            self.reason = reason
            self.players = players
            self.sink = sink
            self.accessory = accessory
        }

        public enum CodingKeys: String, CodingKey { case at, action, reason, players, sink, accessory }
    }

    /// `host-addresses`: this host's Bluetooth addresses in use changed.
    public struct HostAddressesEvent: Codable, Sendable, Hashable {
        public static let name = "host-addresses"
        public var at: Int64
        public var addresses: [HostAddressEntry]
        public var added: [String]
        public var removed: [String]

        public init(at: Int64, addresses: [HostAddressEntry], added: [String], removed: [String]) {
            self.at = at
            self.addresses = addresses
            self.added = added
            self.removed = removed
        }
    }

    // MARK: Requests

    /// A request line as a client sends it: `op`, `id`, then the body's fields beside them.
    public struct Request<Body: Encodable & Sendable>: Encodable, Sendable {
        public var operation: ControlOperation
        public var id: JSONValue?
        public var body: Body

        public init(_ operation: ControlOperation, id: JSONValue?, _ body: Body) {
            self.operation = operation
            self.id = id
            self.body = body
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: LineKey.self)
            try container.encode(operation.rawValue, forKey: .op)
            try container.encodeIfPresent(id, forKey: .id)
            try body.encode(to: encoder)
        }
    }

    /// The body of list, status and subscribe: nothing.
    public struct NoFields: Encodable, Sendable {
        public init() {}
        public func encode(to encoder: any Encoder) throws {}
    }

    /// The body of current and unregister: `accessory`, and for unregister the `reporter` that
    /// owns it (left out: the reporter registered on the connection).
    public struct AccessoryField: Encodable, Sendable {
        public var accessory: String
        public var reporter: String?
        public init(accessory: String, reporter: String? = nil) {
            self.accessory = accessory
            self.reporter = reporter
        }
    }

    /// The body of register: `accessory`, `reporter`, `capabilities`, and `placement`,
    /// `primary-source`, `secondary-source` when given (left out otherwise). The daemon reads
    /// requests with `AccessoryRequestDecoder` (RoutingPolicy, shared with `earshot eval`
    /// scripts), whose field-named messages both transports answer with.
    public struct RegisterRequest: Encodable, Sendable {
        public var accessory: String
        public var reporter: String
        public var configuration: Configuration

        public init(accessory: String, reporter: String, configuration: Configuration) {
            self.accessory = accessory
            self.reporter = reporter
            self.configuration = configuration
        }

        public enum CodingKeys: String, CodingKey { case accessory, reporter }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(accessory, forKey: .accessory)
            try container.encode(reporter, forKey: .reporter)
            var fields = encoder.container(keyedBy: Configuration.CodingKeys.self)
            try fields.encode(configuration.capabilities, forKey: .capabilities)
            try fields.encodeIfPresent(configuration.placement, forKey: .placement)
            try fields.encodeIfPresent(configuration.primarySource, forKey: .primarySource)
            try fields.encodeIfPresent(configuration.secondarySource, forKey: .secondarySource)
        }
    }

    /// The body of update: `accessory`, `reporter` when given (left out: the reporter
    /// registered on the connection) and each field that changes; a source cleared is null,
    /// a field kept is left out.
    public struct UpdateRequest: Encodable, Sendable {
        public var accessory: String
        public var reporter: String?
        public var placement: String?
        public var primarySource: FieldChange<String>
        public var secondarySource: FieldChange<String>

        public init(
            accessory: String, reporter: String? = nil, placement: String? = nil, primarySource: FieldChange<String> = .keep,
            secondarySource: FieldChange<String> = .keep
        ) {
            self.accessory = accessory
            self.reporter = reporter
            self.placement = placement
            self.primarySource = primarySource
            self.secondarySource = secondarySource
        }

        public func encode(to encoder: any Encoder) throws {
            try AccessoryField(accessory: accessory, reporter: reporter).encode(to: encoder)
            var fields = encoder.container(keyedBy: Configuration.CodingKeys.self)
            try fields.encodeIfPresent(placement, forKey: .placement)
            for (change, key) in [(primarySource, Configuration.CodingKeys.primarySource), (secondarySource, .secondarySource)] {
                switch change {
                case .keep: break
                case .set(let address): try fields.encode(address, forKey: key)
                case .clear: try fields.encodeNil(forKey: key)
                }
            }
        }
    }

    // MARK: Encoding

    /// Compact JSON with sorted keys (no escaped slashes): the protocol's one spelling of a value.
    static func encoded(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// `value` as the JSON a client reads, built directly (no text in between): for the D-Bus
    /// service, which turns objects into `a{sv}` by their field names.
    public static func jsonValue(of value: some Encodable) throws -> JSONValue {
        try JSONValueEncoder.encode(value)
    }

    /// `value`'s canonical text: what the CLI prints for `--json`.
    public static func text(_ value: some Encodable) -> String {
        guard let data = try? encoded(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}
