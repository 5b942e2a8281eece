import WireFields
import ControlProtocol
import ArgumentParser
import AudioGraph

/// `earshot status`: the running daemon's mode and its current decision.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show how the daemon applies decisions and the current default with its reason.",
        discussion: "Exit codes: 0 ok, 1 refused, 2 usage, 3 daemon or PipeWire not reachable (the status is still printed when the daemon answers).")

    @Flag(help: "Print the JSON the daemon sent (one line; the decision as `earshot eval --format json` prints it).")
    var json = false

    @Flag(help: "Add every eligible sink's tier values, the tier that decided, and why each other sink was rejected.")
    var explain = false

    @OptionGroup var socket: ControlSocketOption

    func run() throws {
        try Self.outcome(socket: socket.path, json: json, explain: explain).emit()
    }

    /// The status as printed; exit 3 (not reachable) also when the daemon answers but is not
    /// connected to PipeWire: either way nothing routes audio.
    static func outcome(socket: String?, json: Bool, explain: Bool) -> CommandOutcome {
        var disconnectedFrom: String?
        var outcome = ControlActions.exchange(socket: socket, .status, reply: ControlWire.StatusResult.self) { reply in
            if !reply.status.connected { disconnectedFrom = reply.status.remote }
            return json ? ControlWire.text(reply.status) : StatusText.render(reply.status, explain: explain)
        }
        if outcome.exitCode == 0, let remote = disconnectedFrom {
            outcome.standardError += "earshot: the daemon runs but PipeWire (\(remote)) is not reachable\n"
            outcome.exitCode = ControlActions.unreachable
        }
        return outcome
    }
}
