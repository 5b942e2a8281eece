import RoutingPolicy
import AudioGraph
import FoundationEssentials

/// One line of an event script.
public struct EvalEvent: Sendable {
    public enum Action: Sendable {
        /// A register/update/unregister, or the refusal its body earned when decoded.
        case accessory(verb: String, subject: String, Result<AccessoryRequest, AccessoryError>)
        case add(GraphChange)
        /// Resolved to an object id when it runs: ids come and go during a script.
        case remove(node: String)
        case select(node: String)
        /// The user picks the default source (§8).
        case selectSource(node: String)
        /// A route of a device (by `device.name`) becomes available or not — a jack or a
        /// monitor — and, with `active`, the card's active route for it.
        case route(device: String, route: String, available: RouteAvailability, active: Bool)
        /// A capture stream starts (§8 calls): a `Stream/Input/Audio` node.
        case addStream(Node)
        /// A capture stream ends, by node id (streams share names).
        case removeStream(id: ObjectID)
        /// A stream's target in the `default` metadata (`target.object` or `target.node`) is
        /// set, or removed (nil): a user's or session manager's choice of its source.
        case streamTarget(id: ObjectID, key: String, value: String?)
        /// A media player on the session bus (§7), for what a departure would pause.
        case addPlayer(PlaybackPreview.Player)
    }

    public var at: Milliseconds
    public var line: Int
    public var action: Action
    /// The line's `"expect"`: checked once the event and the timers it starts have settled.
    public var expectations: [EvalExpectation] = []
}

/// A script line that cannot be run: the line number and what is wrong with it.
public struct EvalScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var line: Int
    public var message: String
    public var description: String { "\(source):\(line): \(message)" }
}

/// Reads JSON Lines event scripts: `{"at": ms, "<action>": {…}}` per line, `at` non-decreasing.
/// Blank lines and lines starting with `#` are skipped.
public enum EvalScript {
    public static let actions = ["register", "update", "unregister", "add", "remove", "select", "select-source", "route"] + streamActions + ["add-player"]

    /// The latest `at` a script may use: 2^53 ms (about 285 000 years). Every delay the policy
    /// adds to an input's time (at most a minute, a resume window of an hour) stays far from
    /// overflowing; a later time is refused with its line instead of trapping.
    public static let maxAt: Milliseconds = 1 << 53

    public static func parse(_ text: String, source: String = "<events>") throws(EvalScriptError) -> [EvalEvent] {
        var events: [EvalEvent] = []
        var lastAt: Milliseconds = 0
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let lineNumber = index + 1
            // CRLF line ends too (a script written on Windows), as the control socket accepts.
            let line = String(rawLine.trimmingWhitespace)
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ message: String) -> EvalScriptError { EvalScriptError(source: source, line: lineNumber, message: message) }
            let value: JSONValue
            do {
                value = try JSONValue.parse(line)
            } catch {
                // "line 1, column 17": the line is the script's, the column is what counts.
                var place = ""
                if let location = JSONSyntaxLocation.locate(Data(line.utf8)), let found = location.firstRange(of: "column "),
                    let column = Int(location[found.upperBound...])
                {
                    let leading = rawLine.prefix { $0 == " " || $0 == "\t" }.count
                    place = "column \(column + leading): "
                }
                throw fail("\(place)not valid JSON (cut short?); each line is {\"at\": ms, \"<action>\": {…}}")
            }
            guard case .object(let fields) = value else {
                throw fail("not a JSON object; each line is {\"at\": ms, \"<action>\": {…}}")
            }
            guard case .integer(let at)? = fields["at"], at >= 0 else {
                throw fail("\"at\" must be a whole number of milliseconds ≥ 0")
            }
            guard at <= maxAt else {
                throw fail("\"at\" \(at) is too late: at most \(maxAt) ms (2^53)")
            }
            guard at >= lastAt else { throw fail("\"at\" goes back in time (\(at) after \(lastAt)); events must be in time order") }
            lastAt = at
            var expectations: [EvalExpectation] = []
            if let expect = fields["expect"] {
                switch EvalExpectation.parse(expect) {
                case .success(let parsed): expectations = parsed
                case .failure(let error): throw fail(error.message)
                }
            }
            let actionKeys = fields.keys.filter { $0 != "at" && $0 != "expect" }.sorted()
            guard actionKeys.count == 1, let verb = actionKeys.first else {
                throw fail("one action per line, one of \(actions.joined(separator: ", ")); found \(actionKeys.isEmpty ? "none" : actionKeys.joined(separator: ", "))")
            }
            let body = fields[verb] ?? .null
            let action: EvalEvent.Action
            switch verb {
            case "register": action = .accessory(verb: verb, subject: subject(body), AccessoryRequestDecoder.register(body))
            case "update": action = .accessory(verb: verb, subject: subject(body), AccessoryRequestDecoder.update(body))
            case "unregister": action = .accessory(verb: verb, subject: subject(body), AccessoryRequestDecoder.unregister(body))
            case "add":
                let change: GraphChange?
                do {
                    change = try PwDumpDecoder.decodeObject(body, path: "add", source: source)
                } catch {
                    // The script's name and line are said once, by `fail`.
                    throw fail("\(error.location): \(error.message)")
                }
                guard let change, Self.isNodeOrDevice(change) else { throw fail("add takes one pw-dump Node or Device object") }
                action = .add(change)
            case "remove", "select", "select-source":
                guard case .object(let target) = body, case .string(let node)? = target["node"], target.count == 1 else {
                    throw fail("\(verb) takes {\"node\": \"<node.name>\"}")
                }
                switch verb {
                case "remove": action = .remove(node: node)
                case "select": action = .select(node: node)
                default: action = .selectSource(node: node)
                }
            case "route":
                let usage = "route takes {\"device\": \"<device.name>\", \"route\": \"<route name>\", \"available\": \"yes\"|\"no\"|\"unknown\"} and optionally \"active\": true"
                guard case .object(let target) = body, case .string(let device)? = target["device"], case .string(let route)? = target["route"],
                    case .string(let availableText)? = target["available"]
                else { throw fail(usage) }
                guard let available = RouteAvailability(rawValue: availableText) else {
                    throw fail("route: \"available\" is \"\(availableText)\"; it must be \"yes\", \"no\" or \"unknown\"")
                }
                var active = false
                switch target["active"] {
                case nil: break
                case .bool(let flag)?: active = flag
                default: throw fail("route: \"active\" must be true or false")
                }
                if let unknown = target.keys.first(where: { !["device", "route", "available", "active"].contains($0) }) {
                    throw fail("route: unknown field \"\(unknown)\"; \(usage)")
                }
                action = .route(device: device, route: route, available: available, active: active)
            case "add-stream", "remove-stream", "stream-target":
                action = try streamAction(verb, body, fail: fail)
            case "add-player":
                guard expectations.isEmpty else { throw fail("add-player decides nothing, so it has nothing to expect: put \"expect\" on a line that decides") }
                action = .addPlayer(try player(body, fail: fail))
            default:
                throw fail("unknown action \"\(verb)\"; use one of \(actions.joined(separator: ", "))")
            }
            events.append(EvalEvent(at: at, line: lineNumber, action: action, expectations: expectations))
        }
        return events
    }

    private static func subject(_ body: JSONValue) -> String {
        if case .string(let text)? = body["accessory"] { return text }
        return "?"
    }

    private static func isNodeOrDevice(_ change: GraphChange) -> Bool {
        switch change {
        case .node, .device: true
        default: false
        }
    }
}
