import SystemPackage
import ControlProtocol
import ArgumentParser
import FoundationEssentials

/// `earshot record`: the live inputs, saved to replay with `earshot eval`.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record", abstract: "Record what the running daemon's policy sees, to replay it with earshot eval.",
        discussion: """
            Writes DIR/graph.json (the graph when the recording starts, as pw-dump prints it, its \
            default metadata naming the defaults the daemon decided) and DIR/events.jsonl (every \
            registration, placement, source, sink arriving or leaving and default picked by hand \
            from then on, in the format earshot eval --events reads, at in ms from the start). \
            Started before the daemon has reached PipeWire, it waits for the daemon's first graph \
            and starts with it. Ends at Ctrl-C, at --duration, or when the daemon stops; both \
            files are valid however it ends. Replay: earshot eval --graph DIR/graph.json --events \
            DIR/events.jsonl [--config FILE].

            DIR must be yours: a directory another user owns is refused (they could read, change or \
            replace the recording); one that other users may write to is used with a warning.

            Exit codes: 1 refused, a directory another user owns, or a file cannot be written, 2 \
            usage, 3 daemon not reachable.
            """)

    @Option(help: ArgumentHelp("Where to write graph.json and events.jsonl (default: earshot-recording-DATE-TIME).", valueName: "dir"),
            completion: .directory)
    var output: String?

    @Option(help: ArgumentHelp("Stop after this long: 90s, 10m, 2h.", valueName: "duration"))
    var duration: String?

    @Option(help: ArgumentHelp(
        "Instead of recording from now, save what the daemon's own rolling recording ([record] keep-hours) kept from this long ago: 30m, 2h.",
        valueName: "duration"))
    var since: String?

    @Option(help: ArgumentHelp("The rolling recording's directory (default: $XDG_STATE_HOME/earshot/recordings).", valueName: "dir"),
            completion: .directory)
    var recordings: String?

    @OptionGroup var socket: ControlSocketOption

    private static func warn(_ line: String) {
        Console.error((line + "\n"))
    }

    func validate() throws {
        for (flag, value) in [("--duration", duration), ("--since", since)] {
            if let value, RecordActions.duration(value) == nil {
                throw ValidationError("\(flag) takes a whole number of ms, s, m or h, such as 90s or 2h, not \"\(value)\"")
            }
        }
        if since != nil, duration != nil { throw ValidationError("--since saves what was kept; --duration records from now: use one") }
    }

    func run() throws {
        if let since = since.flatMap(RecordActions.duration) {
            let environment = ProcessInfo.processInfo.environment
            let directory: String
            do {
                directory = try recordings ?? FilePath(StateLocation.defaultPath(environment: environment)).removingLastComponent().string + "/recordings"
            } catch {
                return try CommandOutcome(standardError: "earshot record: \(error); or name the recordings with --recordings DIR\n", exitCode: 1).emit()
            }
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            try RecordActions.assemble(
                recordings: directory, since: since, into: output ?? "earshot-recording-since-\(self.since ?? "")", now: now, warn: Self.warn
            ).emit()
            return
        }
        let stamp = Date().ISO8601Format(.iso8601.year().month().day().dateSeparator(.omitted).time(includingFractionalSeconds: false).timeSeparator(.omitted))
        try RecordActions.record(
            socket: socket.path, directory: output ?? "earshot-recording-\(stamp)", duration: duration.flatMap(RecordActions.duration),
            warn: Self.warn
        ) { directory in
            Console.error("earshot record: recording to \(directory) (graph.json, events.jsonl); Ctrl-C stops\n")
        }.emit()
    }
}
