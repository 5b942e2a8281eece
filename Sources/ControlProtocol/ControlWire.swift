import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// The operations of the control protocol (docs/control-protocol.md).
public enum ControlOperation: String, Sendable, Hashable, CaseIterable {
    case register, current, update, unregister, list, status, subscribe, record
}

/// One request line, understood.
public struct ControlRequest: Sendable, Hashable {
    public enum Command: Sendable, Hashable {
        /// register, update, unregister.
        case accessory(AccessoryRequest)
        case current(AccessoryIdentity)
        /// One page of registrations: those after `after` (in list order), at most `limit`.
        case list(after: AccessoryIdentity?, limit: Int?)
        case status
        case subscribe
        /// A recording of the inputs from now (`earshot record`).
        case record

        /// register, update, unregister: what changes the daemon (the rest only asks).
        public var isChange: Bool {
            if case .accessory = self { true } else { false }
        }
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
    /// `ok: true`: the whole line, whose result `ControlWire.result(_:from:)` reads.
    case success(id: JSONValue?, line: Data)
    case failure(id: JSONValue?, AccessoryError)
    /// An event line: the event, and the JSON object as it was sent.
    case event(ControlWire.Event, json: JSONValue)
    /// A recorded input line (`record`): an `earshot eval --events` line.
    case recorded(JSONValue)
}

/// The JSON ⇄ Swift mapping of the control protocol, in one place for the server, the client
/// and the docs: reading requests (through `AccessoryRequestDecoder`, shared with `earshot eval`),
/// and the messages' Codable types (ControlMessages.swift). Lines are written with sorted keys
/// and absent values as null, so every line has every field and diffs cleanly.
public enum ControlWire {
    /// Operations that take nothing but `op` and `id`.
    private static let bareOperations: Set<ControlOperation> = [.status, .subscribe, .record]

    // MARK: Requests

    public static func request(from line: Data) -> Result<ControlRequest, ControlRequestFailure> {
        let check = ControlRequestCheck.problem(in: line)
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: line)
        } catch {
            if let check, check != .syntax {
                return .failure(ControlRequestFailure(id: nil, error: check.error))
            }
            let place = JSONSyntaxLocation.locate(line).map { " at \($0)" } ?? ""
            return .failure(ControlRequestFailure(id: nil, error: invalid(
                "malformed JSON\(place): send one JSON object per line, such as {\"id\":1,\"op\":\"status\"}")))
        }
        guard case .object(var fields) = value else {
            return .failure(ControlRequestFailure(id: nil, error: invalid(
                "a request is a JSON object, not \(value.canonicalText.prefix(40)): send one such as {\"id\":1,\"op\":\"status\"}")))
        }
        let sentID = fields.removeValue(forKey: LineKey.id.stringValue)
        if let check, check != .syntax {
            return .failure(ControlRequestFailure(id: check.spoilsID ? nil : sentID, error: check.error))
        }
        let id = sentID
        let fail = { (error: AccessoryError) in Result<ControlRequest, ControlRequestFailure>.failure(ControlRequestFailure(id: id, error: error)) }
        let operations = ControlOperation.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let opValue = fields.removeValue(forKey: LineKey.op.stringValue) else {
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
        case .list: command = listPage(fields)
        case .status: command = .success(.status)
        case .subscribe: command = .success(.subscribe)
        case .record: command = .success(.record)
        }
        if case .success(.accessory(let request)) = command, let reporter = request.reporter, ReporterName.isBuiltInDriver(reporter) {
            return fail(ReporterName.reservedError(reporter))
        }
        switch command {
        case .success(let command): return .success(ControlRequest(id: id, command: command))
        case .failure(let error): return fail(error)
        }
    }

    /// The largest page `list` answers: `limit` may ask for fewer.
    public static let listPageLimit = 256
    /// A page also stops before its entries would pass this many bytes (always one at least),
    /// so a page stays far under the per-client output limit whatever the names' lengths.
    public static let listPageBytes = 256 * 1024

    /// `list`'s optional `after` (an accessory: the page starts after it) and `limit`.
    private static func listPage(_ fields: [String: JSONValue]) -> Result<ControlRequest.Command, AccessoryError> {
        if let extra = fields.keys.sorted().first(where: { $0 != "after" && $0 != "limit" }) {
            return .failure(invalid("unknown field \"\(extra)\" in list: list takes \"op\", \"id\", and optionally \"after\" and \"limit\""))
        }
        var after: AccessoryIdentity?
        switch fields["after"] {
        case nil, .null?: break
        case .string(let text)?:
            guard let identity = AccessoryIdentity(parsing: text) else {
                return .failure(invalid("malformed after \(JSONValue.string(text).canonicalText): give the accessory of the last entry of the previous page (its \"next\")"))
            }
            after = identity
        case let other?:
            return .failure(invalid("malformed after \(other.canonicalText): give the previous page's \"next\", a string"))
        }
        var limit: Int?
        switch fields["limit"] {
        case nil, .null?: break
        case .integer(let number)? where (1...Int64(listPageLimit)).contains(number): limit = Int(number)
        case let other?:
            return .failure(invalid("malformed limit \(other.canonicalText): give an integer from 1 to \(listPageLimit)"))
        }
        return .success(.list(after: after, limit: limit))
    }

    // MARK: Replies

    public static func success<Result: Codable & Sendable>(id: JSONValue?, _ result: Result) -> Success<Result> {
        Success(id: id, result)
    }

    public static func failure(id: JSONValue?, _ error: AccessoryError) -> Failure {
        Failure(id: id, error)
    }

    // MARK: Events


    // MARK: Lines

    /// One line of the protocol: compact JSON with sorted keys, then a newline.
    public static func line(_ value: some Encodable) -> Data {
        var data = (try? encoded(value)) ?? Data("null".utf8)
        data.append(0x0A)
        return data
    }

    /// What tells a line apart: an event has `event`; a reply has `ok`, a refusal `error`.
    private struct Envelope: Decodable {
        var event: String?
        var record: JSONValue?
        var id: JSONValue?
        var ok: Bool?
        var error: ErrorObject?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: LineKey.self)
            event = try? container.decodeIfPresent(String.self, forKey: .event)
            record = try? container.decodeIfPresent(JSONValue.self, forKey: .record)
            id = try container.decodeIfPresent(JSONValue.self, forKey: .id).flatMap { $0 == .null ? nil : $0 }
            ok = try? container.decodeIfPresent(Bool.self, forKey: .ok)
            error = try? container.decodeIfPresent(ErrorObject.self, forKey: .error)
        }
    }

    /// Reads a line the server sent. Throws when it is not a reply or an event.
    public static func message(from line: Data) throws(ControlWireError) -> ControlMessage {
        let quoted = { (count: Int) in String(decoding: line.prefix(count), as: UTF8.self) }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line) else {
            throw ControlWireError("not a JSON object: \(quoted(80))")
        }
        if let record = envelope.record { return .recorded(record) }
        if envelope.event != nil {
            do {
                return .event(try JSONDecoder().decode(Event.self, from: line), json: try JSONDecoder().decode(JSONValue.self, from: line))
            } catch {
                throw ControlWireError("an event the protocol does not describe (\(ControlWireError.field(of: error))): \(quoted(200))")
            }
        }
        switch envelope.ok {
        case true?:
            return .success(id: envelope.id, line: line)
        case false?:
            guard let error = envelope.error, let code = AccessoryError.Code(rawValue: error.code) else {
                throw ControlWireError("a refusal without an error code and message: \(quoted(200))")
            }
            return .failure(id: envelope.id, AccessoryError(code, error.message))
        case nil:
            throw ControlWireError("neither a reply (\"ok\") nor an event (\"event\"): \(quoted(200))")
        }
    }

    /// The result of a successful reply `line` (an `AccessoryResult`, `StatusResult`, …).
    public static func result<Result: Decodable>(_ type: Result.Type, from line: Data) throws(ControlWireError) -> Result {
        do {
            return try JSONDecoder().decode(Result.self, from: line)
        } catch {
            throw ControlWireError("a reply the protocol does not describe (\(ControlWireError.field(of: error))): \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
    }

    private static func invalid(_ message: String) -> AccessoryError { AccessoryError(.invalidRequest, message) }
}

/// A line from the server that does not follow the protocol.
public struct ControlWireError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// Which field a decoding error is about, and what is wrong: `status.mode: missing`.
    static func field(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let place = { (path: [any CodingKey]) in
            String(path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(place(context.codingPath + [key])): missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(place(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context): return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
