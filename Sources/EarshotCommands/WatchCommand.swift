import ArgumentParser
import FoundationEssentials

/// `earshot watch`: route changes (and the other events) as they happen.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print route changes as they happen: at, reason, previous -> current, accessory.",
        discussion: """
            One line per event until interrupted. Accessory registrations and updates, media \
            players paused and resumed, and changes of this host's Bluetooth addresses are shown \
            too.

            Exit codes: 1 refused, 2 usage, 3 daemon not reachable or gone (with --reconnect: \
            waits instead).
            """)

    @Flag(help: "Print each event as the JSON line the daemon sent.")
    var json = false

    @Option(name: .customLong("route-changes"), help: ArgumentHelp("Exit 0 after this many route changes of the output (for scripts; the microphone's changes are printed, not counted).", valueName: "n"))
    var routeChanges: Int?

    @Flag(help: "Follow the daemon across restarts: wait for it and subscribe again (events while it is away are missed).")
    var reconnect = false

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        if let routeChanges, routeChanges < 1 { throw ValidationError("--route-changes must be at least 1") }
    }

    func run() throws {
        // Unbuffered: a line must show (or reach a pipe) when its event happens.
        try ControlActions.watch(
            socket: socket.path, json: json, routeChanges: routeChanges, reconnect: reconnect,
            subscribed: { path in Console.error("earshot watch: subscribed at \(path)\n") },
            lost: { why in Console.error("earshot watch: the daemon went away (\(why)); waiting for it\n") }
        ) { line in
            Console.output((line + "\n"))
        }.emit()
    }
}
