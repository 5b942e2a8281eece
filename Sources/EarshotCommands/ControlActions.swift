import WireFields
import SystemBridge
import ControlProtocol
import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// The logic of the control commands (accessory, status, watch): one exchange with the daemon
/// each, mapped to the CLI's exit codes: 0 ok, 1 refused by the daemon, 3 daemon not reachable.
/// (2, usage, is decided before any of this runs.)
enum ControlActions {
    static let refused: Int32 = 1
    static let unreachable: Int32 = 3

    /// `earshot: warning: …`, a line each (escaped: a warning may quote a name); "" for none.
    static func warningLines(_ warnings: [String], command: String = "earshot") -> String {
        warnings.map { TerminalText.escape("\(command): warning: \($0)") + "\n" }.joined()
    }

    /// `earshot: refused: CODE: MESSAGE`, exit 1. The message may quote names any client
    /// chose: escaped (TerminalText).
    static func refusal(_ error: AccessoryError, command: String = "earshot") -> CommandOutcome {
        CommandOutcome(standardError: TerminalText.escape("\(command): refused: \(error.code.rawValue): \(error.message)") + "\n", exitCode: refused)
    }

    /// Sends one request; `render` turns its result into what is printed, and each of its
    /// `warnings` (a register reply's) goes to stderr as `earshot: warning: …` (the exit status
    /// stays 0: the request stood).
    static func exchange<Body: Encodable & Sendable, Reply: Decodable>(
        socket: String?, _ operation: ControlOperation, _ body: Body, reply: Reply.Type, render: (Reply) -> String,
        warnings: (Reply) -> [String] = { _ in [] }
    ) -> CommandOutcome {
        do {
            let client = try ControlClient.connect(path: socket ?? ControlSocketPath.default())
            switch try client.request(operation, body, reply: reply) {
            case .success(let reply):
                return CommandOutcome(standardOutput: render(reply) + "\n", standardError: warningLines(warnings(reply)))
            case .failure(let error):
                return refusal(error)
            }
        } catch {
            return CommandOutcome(standardError: "earshot: \(error)\n", exitCode: unreachable)
        }
    }

    /// Every registration, page by page (`list` with `after`), on one connection.
    static func listAll(socket: String?, render: ([ControlWire.ListedAccessory]) -> String) -> CommandOutcome {
        do {
            let client = try ControlClient.connect(path: socket ?? ControlSocketPath.default())
            var all: [ControlWire.ListedAccessory] = []
            var after: String?
            repeat {
                switch try client.request(.list, ControlWire.ListRequest(after: after), reply: ControlWire.ListResult.self) {
                case .success(let page):
                    all += page.accessories
                    after = page.next
                case .failure(let error):
                    return refusal(error)
                }
            } while after != nil
            return CommandOutcome(standardOutput: render(all) + "\n")
        } catch {
            return CommandOutcome(standardError: "earshot: \(error)\n", exitCode: unreachable)
        }
    }

    /// A request that takes no fields (list, status).
    static func exchange<Reply: Decodable>(socket: String?, _ operation: ControlOperation, reply: Reply.Type, render: (Reply) -> String) -> CommandOutcome {
        exchange(socket: socket, operation, ControlWire.NoFields(), reply: reply, render: render)
    }

    /// `earshot watch`: subscribes, then prints each event as it comes until the daemon goes
    /// away (exit 3) or the process is interrupted.
    /// Streams events; with `routeChanges`, returns after that many route changes.
    /// `subscribed` runs once the daemon has accepted the subscription: from then on no event
    /// is missed, which is what a script waits for before it changes anything.
    /// With `reconnect`, a daemon that goes away (a restart) is waited for and subscribed to
    /// again, as `earshot report` does, with `lost` told each time; without it that is exit 3.
    static func watch(
        socket: String?, json: Bool, routeChanges: Int? = nil, reconnect: Bool = false, subscribed: (String) -> Void = { _ in },
        lost: (String) -> Void = { _ in }, write: (String) -> Void
    ) -> CommandOutcome {
        let path = socket ?? ControlSocketPath.default()
        var remaining = routeChanges
        var backoff: Duration = .milliseconds(50)
        var waiting = false
        while true {
            do {
                let client = try ControlClient.connect(path: path)
                if case .failure(let error) = try client.request(.subscribe, reply: ControlWire.SubscribeResult.self) {
                    return refusal(error)
                }
                subscribed(path)
                backoff = .milliseconds(50)
                waiting = false
                while remaining.map({ $0 > 0 }) ?? true {
                    let (event, sent) = try client.nextEvent()
                    write(json ? sent.canonicalText : ControlText.event(event))
                    // Output route changes only: a script written before the input followed
                    // counts the outputs it waits for.
                    if case .routeChange(let change) = event, change.direction == AudioDirection.output { remaining = remaining.map { $0 - 1 } }
                }
                return CommandOutcome()
            } catch {
                guard reconnect else { return CommandOutcome(standardError: "earshot: \(error)\n", exitCode: unreachable) }
                if !waiting { lost("\(error)") }
                waiting = true
                // Retry backoff while the daemon is away (50 ms doubling to 1 s).
                CurrentProcess.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(1))
            }
        }
    }

    // MARK: Requests from arguments

    /// A register request; nil values are left out.
    static func registerRequest(
        accessory: String, capabilities: [String], placement: String?, primarySource: String?, secondarySource: String?, reporter: String
    ) -> ControlWire.RegisterRequest {
        ControlWire.RegisterRequest(
            accessory: accessory, reporter: reporter,
            configuration: ControlWire.Configuration(
                capabilities: capabilities, placement: placement, primarySource: primarySource, secondarySource: secondarySource))
    }

    /// An update; a source given as `none` is cleared (null on the wire).
    static func updateRequest(
        accessory: String, reporter: String, placement: String?, primarySource: String?, secondarySource: String?
    ) -> ControlWire.UpdateRequest {
        let change = { (source: String?) -> FieldChange<String> in
            switch source {
            case nil: .keep
            case "none"?: .clear
            case let address?: .set(address)
            }
        }
        return ControlWire.UpdateRequest(
            accessory: accessory, reporter: reporter, placement: placement, primarySource: change(primarySource),
            secondarySource: change(secondarySource))
    }
}
