import ArgumentParser
import Foundation

/// `earshot record`: the live inputs, saved to replay with `earshot eval`.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record", abstract: "Record what the running daemon's policy sees, to replay it with earshot eval.",
        discussion: """
            Writes DIR/graph.json (the graph when the recording starts, as pw-dump prints it) and \
            DIR/events.jsonl (every registration, placement, source, sink arriving or leaving and \
            default picked by hand from then on, in the format earshot eval --events reads, at in \
            ms from the start). Ends at Ctrl-C, at --duration, or when the daemon stops; both \
            files are valid however it ends. Replay: earshot eval --graph DIR/graph.json --events \
            DIR/events.jsonl [--config FILE].

            Exit codes: 1 refused or a file cannot be written, 2 usage, 3 daemon not reachable.
            """)

    @Option(help: ArgumentHelp("Where to write graph.json and events.jsonl (default: earshot-recording-DATE-TIME).", valueName: "dir"),
            completion: .directory)
    var output: String?

    @Option(help: ArgumentHelp("Stop after this long: 90s, 10m, 2h.", valueName: "duration"))
    var duration: String?

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        if let duration, RecordActions.duration(duration) == nil {
            throw ValidationError("--duration takes a whole number of ms, s, m or h, such as 90s or 2h, not \"\(duration)\"")
        }
    }

    func run() throws {
        let stamp = Date().ISO8601Format(.iso8601.year().month().day().dateSeparator(.omitted).time(includingFractionalSeconds: false).timeSeparator(.omitted))
        try RecordActions.record(
            socket: socket.path, directory: output ?? "earshot-recording-\(stamp)", duration: duration.flatMap(RecordActions.duration)
        ) { directory in
            FileHandle.standardError.write(Data("earshot record: recording to \(directory) (graph.json, events.jsonl); Ctrl-C stops\n".utf8))
        }.emit()
    }
}
