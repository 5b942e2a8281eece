import AudioGraph
import Foundation

/// One line of an event script.
public struct EvalEvent: Sendable {
    public enum Action: Sendable {
        /// A register/update/unregister, or the refusal its body earned when decoded.
        case accessory(verb: String, subject: String, Result<AccessoryRequest, AccessoryError>)
        case add(GraphChange)
        /// Resolved to an object id when it runs: ids come and go during a script.
        case remove(node: String)
        case select(node: String)
    }

    public var at: Milliseconds
    public var line: Int
    public var action: Action
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
    public static let actions = ["register", "update", "unregister", "add", "remove", "select"]

    public static func parse(_ text: String, source: String = "<events>") throws(EvalScriptError) -> [EvalEvent] {
        var events: [EvalEvent] = []
        var lastAt: Milliseconds = 0
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ message: String) -> EvalScriptError { EvalScriptError(source: source, line: lineNumber, message: message) }
            guard let value = try? JSONValue.parse(line), case .object(let fields) = value else {
                throw fail("not a JSON object; each line is {\"at\": ms, \"<action>\": {…}}")
            }
            guard case .integer(let at)? = fields["at"], at >= 0 else {
                throw fail("\"at\" must be a whole number of milliseconds ≥ 0")
            }
            guard at >= lastAt else { throw fail("\"at\" goes back in time (\(at) after \(lastAt)); events must be in time order") }
            lastAt = at
            let actionKeys = fields.keys.filter { $0 != "at" }.sorted()
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
                    throw fail(error.description)
                }
                guard let change, Self.isNodeOrDevice(change) else { throw fail("add takes one pw-dump Node or Device object") }
                action = .add(change)
            case "remove", "select":
                guard case .object(let target) = body, case .string(let node)? = target["node"], target.count == 1 else {
                    throw fail("\(verb) takes {\"node\": \"<node.name>\"}")
                }
                action = verb == "remove" ? .remove(node: node) : .select(node: node)
            default:
                throw fail("unknown action \"\(verb)\"; use one of \(actions.joined(separator: ", "))")
            }
            events.append(EvalEvent(at: at, line: lineNumber, action: action))
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
