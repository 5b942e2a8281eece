import AudioGraph
import FoundationEssentials
import RoutingPolicy
import WireFields

/// One Codable type per message of the control protocol (docs/control-protocol.md): the line's
/// envelope (replies, requests) here; the objects they carry — accessories, status, events —
/// in ControlAccessories, ControlStatus and ControlEvents, each field declared once in its
/// type's `wireFields` (WireFields). The server (ControlSession), the D-Bus service
/// (EarshotBusValues) and the CLI (ControlClient, ControlText, StatusText) all go through
/// these types. Enums are open (`OpenEnum`), so a client reads a newer daemon's values without
/// failing.
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
    public struct AccessoryResult: WireRecord, Hashable {
        public var accessory: Accessory?
        public var warnings: [String]?
        public var reporter: String?
        public var driver: DriverEntry?

        public init(_ accessory: Accessory?, warnings: [String]? = nil, reporter: String? = nil, driver: DriverEntry? = nil) {
            self.accessory = accessory
            self.warnings = warnings
            self.reporter = reporter
            self.driver = driver
        }

        public static let wireBlank = AccessoryResult(nil)
        public static let wireFields: [WireField<Self>] = [
            .nullable("accessory", \.accessory, "the accessory object; null after unregister"),
            .omitted("warnings", \.warnings, "a register reply's warnings (`[]` when none): the registration stands but may not do what was meant"),
            .omitted("reporter", \.reporter, "a current reply's reporter, the one that registered the accessory"),
            .omitted("driver", \.driver, "a current reply's driver: the built-in driver reading the device, when one does"),
        ]
    }

    /// The result of list: `accessories`, sorted, one page of them; `next` is the `after` of
    /// the next page, null on the last.
    public struct ListResult: WireRecord, Hashable {
        public var accessories: [ListedAccessory]
        public var next: String?

        public init(_ accessories: [ListedAccessory], next: String? = nil) {
            self.accessories = accessories
            self.next = next
        }

        public static let wireBlank = ListResult([])
        public static let wireFields: [WireField<Self>] = [
            .field("accessories", \.accessories, "the registrations, addresses first, then node names"),
            .nullable("next", \.next, "the `after` of the next page; null on the last"),
        ]
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
            var fields = encoder.container(keyedBy: WireKey.self)
            try fields.encode(configuration.capabilities, forKey: Configuration.codingKey(\.capabilities))
            try fields.encodeIfPresent(configuration.placement, forKey: Configuration.codingKey(\.placement))
            try fields.encodeIfPresent(configuration.primarySource, forKey: Configuration.codingKey(\.primarySource))
            try fields.encodeIfPresent(configuration.secondarySource, forKey: Configuration.codingKey(\.secondarySource))
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
            var fields = encoder.container(keyedBy: WireKey.self)
            try fields.encodeIfPresent(placement, forKey: Configuration.codingKey(\.placement))
            for (change, key) in [(primarySource, Configuration.codingKey(\.primarySource)), (secondarySource, Configuration.codingKey(\.secondarySource))] {
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
