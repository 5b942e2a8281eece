import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy

/// The logic of the control commands (accessory, status, watch): one exchange with the daemon
/// each, mapped to the CLI's exit codes: 0 ok, 1 refused by the daemon, 3 daemon not reachable.
/// (2, usage, is decided before any of this runs.)
enum ControlActions {
    static let refused: Int32 = 1
    static let unreachable: Int32 = 3

    /// Sends one request; `render` turns the reply's fields into what is printed.
    static func exchange(
        socket: String?, _ operation: ControlOperation, _ fields: [String: JSONValue] = [:],
        render: ([String: JSONValue]) -> String
    ) -> CommandOutcome {
        do {
            let client = try ControlClient.connect(path: socket ?? ControlSocketPath.default())
            switch try client.request(operation, fields) {
            case .success(let reply):
                return CommandOutcome(standardOutput: render(reply) + "\n")
            case .failure(let error):
                return CommandOutcome(standardError: "earshot: refused: \(error.code.rawValue): \(error.message)\n", exitCode: refused)
            }
        } catch {
            return CommandOutcome(standardError: "earshot: \(error)\n", exitCode: unreachable)
        }
    }

    /// `earshot watch`: subscribes, then prints each event as it comes until the daemon goes
    /// away (exit 3) or the process is interrupted.
    /// Streams events; with `routeChanges`, returns after that many route changes.
    /// `subscribed` runs once the daemon has accepted the subscription: from then on no event
    /// is missed, which is what a script waits for before it changes anything.
    static func watch(
        socket: String?, json: Bool, routeChanges: Int? = nil, subscribed: (String) -> Void = { _ in }, write: (String) -> Void
    ) -> CommandOutcome {
        do {
            let path = socket ?? ControlSocketPath.default()
            let client = try ControlClient.connect(path: path)
            if case .failure(let error) = try client.request(.subscribe) {
                return CommandOutcome(standardError: "earshot: refused: \(error.code.rawValue): \(error.message)\n", exitCode: refused)
            }
            subscribed(path)
            var remaining = routeChanges
            while remaining.map({ $0 > 0 }) ?? true {
                let (name, fields) = try client.nextEvent()
                write(json ? JSONValue.object(fields).canonicalText : ControlText.event(name: name, fields))
                if name == "route-change" { remaining = remaining.map { $0 - 1 } }
            }
            return CommandOutcome()
        } catch {
            return CommandOutcome(standardError: "earshot: \(error)\n", exitCode: unreachable)
        }
    }

    // MARK: Requests from arguments

    /// The fields of a register request; nil values are left out.
    static func registerFields(
        accessory: String, capabilities: [String], placement: String?, primarySource: String?, secondarySource: String?, reporter: String
    ) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "accessory": .string(accessory), "reporter": .string(reporter),
            "capabilities": .array(capabilities.map(JSONValue.string)),
        ]
        if let placement { fields["placement"] = .string(placement) }
        if let primarySource { fields["primary-source"] = .string(primarySource) }
        if let secondarySource { fields["secondary-source"] = .string(secondarySource) }
        return fields
    }

    /// The fields of an update; a source given as `none` is cleared (null on the wire).
    static func updateFields(accessory: String, placement: String?, primarySource: String?, secondarySource: String?) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["accessory": .string(accessory)]
        if let placement { fields["placement"] = .string(placement) }
        if let primarySource { fields["primary-source"] = primarySource == "none" ? .null : .string(primarySource) }
        if let secondarySource { fields["secondary-source"] = secondarySource == "none" ? .null : .string(secondarySource) }
        return fields
    }
}
