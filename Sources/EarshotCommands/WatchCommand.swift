import ArgumentParser
import Foundation

/// `earshot watch`: route changes (and accessory events) as they happen.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print route changes as they happen: at, reason, previous -> current, accessory.",
        discussion: """
            One line per event until interrupted. Accessory registrations and updates are shown too.
            Exit codes: 1 refused, 2 usage, 3 daemon not reachable or gone.
            """)

    @Flag(help: "Print each event as the JSON line the daemon sent.")
    var json = false

    @OptionGroup var socket: ControlSocketOption

    func run() throws {
        // Unbuffered: a line must show (or reach a pipe) when its event happens.
        try ControlActions.watch(socket: socket.path, json: json) { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }.emit()
    }
}
