import ArgumentParser
import AudioGraph
import EarshotDaemon

/// `earshot status`: the running daemon's mode and its current decision.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show how the daemon applies decisions and the current default with its reason.",
        discussion: "Exit codes: 0 ok, 1 refused, 2 usage, 3 daemon not reachable.")

    @Flag(help: "Print the JSON the daemon sent (one line; the decision as `earshot eval --format json` prints it).")
    var json = false

    @Flag(help: "Add every eligible sink's score as a sum of terms, and why each other sink was rejected.")
    var explain = false

    @OptionGroup var socket: ControlSocketOption

    func run() throws {
        try ControlActions.exchange(socket: socket.path, .status, reply: ControlWire.StatusResult.self) { reply in
            json ? ControlWire.text(reply.status) : StatusText.render(reply.status, explain: explain)
        }.emit()
    }
}
