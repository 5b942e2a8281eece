import AudioGraph
import Foundation
import RoutingPolicy

/// The operations of the control protocol (docs/control-protocol.md).
public enum ControlOperation: String, Sendable, Hashable, CaseIterable {
    case register, current, update, unregister, list, status, subscribe
}

/// One request line, understood.
public struct ControlRequest: Sendable, Hashable {
    public enum Command: Sendable, Hashable {
        /// register, update, unregister.
        case accessory(AccessoryRequest)
        case current(AccessoryIdentity)
        case list
        case status
        case subscribe
    }

    /// The caller's `id`, echoed in the reply (any JSON value; nil when absent).
    public var id: JSONValue?
    public var command: Command
}

/// A request line that was refused before reaching the daemon. Its reply still echoes the
/// line's `id` when one could be read.
public struct ControlRequestFailure: Error, Sendable, Hashable {
    public var id: JSONValue?
    public var error: AccessoryError
}

/// What a client reads: a reply to one of its requests, or an event of its subscription.
public enum ControlMessage: Sendable, Hashable {
    /// `ok: true`, with the reply's other fields (`id` and `ok` removed).
    case success(id: JSONValue?, fields: [String: JSONValue])
    case failure(id: JSONValue?, AccessoryError)
    /// An event line: its `event` name and all of its fields.
    case event(name: String, fields: [String: JSONValue])
}

/// The JSON ⇄ Swift mapping of the control protocol, in one place for the server, the client
/// and the docs. Replies are written with sorted keys and absent values as null, so every line
/// has every field and diffs cleanly.
public enum ControlWire {
    /// Operations that take nothing but `op` and `id`.
    private static let bareOperations: Set<ControlOperation> = [.list, .status, .subscribe]

    // MARK: Requests

    public static func request(from line: Data) -> Result<ControlRequest, ControlRequestFailure> {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: line)
        } catch {
            let place = JSONSyntaxLocation.locate(line).map { " at \($0)" } ?? ""
            return .failure(ControlRequestFailure(id: nil, error: invalid(
                "malformed JSON\(place): send one JSON object per line, such as {\"id\":1,\"op\":\"status\"}")))
        }
        guard case .object(var fields) = value else {
            return .failure(ControlRequestFailure(id: nil, error: invalid(
                "a request is a JSON object, not \(value.canonicalText.prefix(40)): send one such as {\"id\":1,\"op\":\"status\"}")))
        }
        let id = fields.removeValue(forKey: "id")
        let fail = { (error: AccessoryError) in Result<ControlRequest, ControlRequestFailure>.failure(ControlRequestFailure(id: id, error: error)) }
        let operations = ControlOperation.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let opValue = fields.removeValue(forKey: "op") else {
            return fail(invalid("missing \"op\": say what to do with one of \(operations)"))
        }
        guard case .string(let name) = opValue, let operation = ControlOperation(rawValue: name) else {
            return fail(invalid("unknown op \(opValue.canonicalText): use one of \(operations)"))
        }
        if bareOperations.contains(operation), let extra = fields.keys.sorted().first {
            return fail(invalid("unknown field \"\(extra)\" in \(name): \(name) takes only \"op\" and \"id\""))
        }
        let body = JSONValue.object(fields)
        let command: Result<ControlRequest.Command, AccessoryError>
        switch operation {
        case .register: command = AccessoryRequestDecoder.register(body).map { .accessory($0) }
        case .update: command = AccessoryRequestDecoder.update(body).map { .accessory($0) }
        case .unregister: command = AccessoryRequestDecoder.unregister(body).map { .accessory($0) }
        case .current: command = AccessoryRequestDecoder.identityOnly(body, verb: "current").map { .current($0) }
        case .list: command = .success(.list)
        case .status: command = .success(.status)
        case .subscribe: command = .success(.subscribe)
        }
        switch command {
        case .success(let command): return .success(ControlRequest(id: id, command: command))
        case .failure(let error): return fail(error)
        }
    }

    /// A request line as a client sends it: `op`, the optional `id`, then the operation's fields.
    public static func request(_ operation: ControlOperation, id: JSONValue? = nil, fields: [String: JSONValue] = [:]) -> JSONValue {
        var object = fields
        object["op"] = .string(operation.rawValue)
        if let id { object["id"] = id }
        return .object(object)
    }

    // MARK: Replies

    public static func success(id: JSONValue?, _ fields: [String: JSONValue] = [:]) -> JSONValue {
        var object = fields
        object["id"] = id ?? .null
        object["ok"] = .bool(true)
        return .object(object)
    }

    public static func failure(id: JSONValue?, _ error: AccessoryError) -> JSONValue {
        .object([
            "id": id ?? .null, "ok": .bool(false),
            "error": .object(["code": .string(error.code.rawValue), "message": .string(error.message)]),
        ])
    }

    /// An accessory as register, update and current reply with it: the fields of a register
    /// request (less the reporter), so a client can send them back as they are.
    public static func accessory(_ identity: AccessoryIdentity, _ configuration: AccessoryConfiguration) -> JSONValue {
        var fields = self.configuration(configuration)
        fields["accessory"] = .string(identity.description)
        return .object(fields)
    }

    /// One entry of `list`.
    public static func accessory(_ status: AccessoryStatus) -> JSONValue {
        var fields = configuration(status.registration.configuration)
        fields["accessory"] = .string(status.registration.identity.description)
        fields["reporter"] = .string(status.registration.reporter)
        fields["stale"] = .bool(status.isStale)
        fields["sinks"] = .array(status.sinks.map(JSONValue.string))
        return .object(fields)
    }

    public static func configuration(_ configuration: AccessoryConfiguration) -> [String: JSONValue] {
        [
            "capabilities": .array(configuration.capabilities.names.map(JSONValue.string)),
            "placement": configuration.placement.map { .string($0.rawValue) } ?? .null,
            "primary-source": configuration.primarySource.map { .string($0.description) } ?? .null,
            "secondary-source": configuration.secondarySource.map { .string($0.description) } ?? .null,
        ]
    }

    /// `status`: how decisions are applied and the latest one, as `earshot eval --format json`
    /// prints decisions (DecisionRecord: ranking with score terms, rejections with reasons).
    public static func status(_ status: DaemonStatus) -> JSONValue {
        .object([
            "mode": .string(status.mode.rawValue),
            "remote": .string(status.remote),
            "connected": .bool(status.connected),
            "session-manager": status.sessionManager.map(JSONValue.string) ?? .null,
            "decision": status.decision.map(Self.decision) ?? .null,
            "subscribers": .integer(Int64(status.subscribers)),
            "host-addresses": .array(status.hostAddresses.map(Self.hostAddress)),
        ])
    }

    /// `{"address": "11:22:33:44:55:66", "from": ["config", "bluez hci0"]}`.
    public static func hostAddress(_ host: HostAddress) -> JSONValue {
        .object([
            "address": .string(host.address.description),
            "from": .array(host.origins.map { .string($0.description) }),
        ])
    }

    public static func decision(_ decision: Decision) -> JSONValue {
        let record = DecisionRecord(decision)
        guard let data = try? JSONEncoder().encode(record), let value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            return .null
        }
        return value
    }

    // MARK: Events

    public static func event(_ event: DaemonEvent) -> JSONValue {
        switch event {
        case .routeChanged(let change):
            return .object([
                "event": .string("route-change"),
                "at": .integer(change.at),
                "reason": .string(change.reason.rawValue),
                "previous": change.previous.map(JSONValue.string) ?? .null,
                "current": change.current.map(JSONValue.string) ?? .null,
                "accessory": change.accessory.map(JSONValue.string) ?? .null,
                "summary": .string(change.summary),
            ])
        case .accessoryChanged(let change):
            return .object([
                "event": .string("accessory"),
                "at": .integer(change.at),
                "change": .string(change.kind.rawValue),
                "accessory": .string(change.accessory),
                "reporter": change.reporter.map(JSONValue.string) ?? .null,
                "configuration": change.configuration.map { .object(configuration($0)) } ?? .null,
            ])
        case .playbackChanged(let change):
            return .object([
                "event": .string("playback"),
                "at": .integer(change.at),
                "action": .string(change.action.rawValue),
                "reason": .string(change.reason.rawValue),
                "players": .array(change.players.map(JSONValue.string)),
                "sink": change.sink.map(JSONValue.string) ?? .null,
                "accessory": change.accessory.map(JSONValue.string) ?? .null,
            ])
        case .hostAddressesChanged(let change):
            return .object([
                "event": .string("host-addresses"),
                "at": .integer(change.at),
                "addresses": .array(change.addresses.map(Self.hostAddress)),
                "added": .array(change.added.map { .string($0.description) }),
                "removed": .array(change.removed.map { .string($0.description) }),
            ])
        }
    }

    // MARK: Lines

    /// One line of the protocol: compact JSON with sorted keys, then a newline.
    public static func line(_ value: JSONValue) -> Data {
        var data = Data(value.canonicalText.utf8)
        data.append(0x0A)
        return data
    }

    /// Reads a line the server sent. Throws when it is not a reply or an event.
    public static func message(from line: Data) throws(ControlWireError) -> ControlMessage {
        guard case .object(var fields)? = try? JSONDecoder().decode(JSONValue.self, from: line) else {
            throw ControlWireError("not a JSON object: \(String(decoding: line.prefix(80), as: UTF8.self))")
        }
        if case .string(let name)? = fields["event"] { return .event(name: name, fields: fields) }
        let id = fields.removeValue(forKey: "id").flatMap { $0 == .null ? nil : $0 }
        switch fields.removeValue(forKey: "ok") {
        case .bool(true)?:
            return .success(id: id, fields: fields)
        case .bool(false)?:
            guard case .string(let codeName)? = fields["error"]?["code"], let code = AccessoryError.Code(rawValue: codeName),
                case .string(let message)? = fields["error"]?["message"]
            else {
                throw ControlWireError("a refusal without an error code and message: \(String(decoding: line.prefix(200), as: UTF8.self))")
            }
            return .failure(id: id, AccessoryError(code, message))
        default:
            throw ControlWireError("neither a reply (\"ok\") nor an event (\"event\"): \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
    }

    private static func invalid(_ message: String) -> AccessoryError { AccessoryError(.invalidRequest, message) }
}

/// A line from the server that does not follow the protocol.
public struct ControlWireError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
