import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials
import SystemBridge

/// `earshot record`: asks the daemon for a recording and writes it as the two files
/// `earshot eval` reads — `graph.json` (the graph when it starts, as pw-dump prints it, naming
/// the defaults the daemon decided; the daemon's first graph when asked for before it) and
/// `events.jsonl` (every input from then on, one line each, appended as it comes). Each line is
/// one write, so however the recording ends (Ctrl-C, --duration, the daemon stopping) both
/// files are valid.
enum RecordActions {
    struct Outcome {
        var lines = 0
        var ended: String
    }

    /// Records into `directory` (created 0700) until `duration` passes or the daemon ends the
    /// recording; `started` is told once the graph is written, `warn` at once when the
    /// directory is the user's but others may write to it.
    static func record(
        socket: String?, directory: String, duration: Duration?, warn: (String) -> Void = { _ in }, started: (String) -> Void
    ) -> CommandOutcome {
        let path = socket ?? ControlSocketPath.default()
        for name in [RecordingFiles.graph, RecordingFiles.events] where FileSystem.exists("\(directory)/\(name)") {
            return CommandOutcome(standardError: "earshot record: \(directory)/\(name) exists: record into another directory (--output)\n", exitCode: 1)
        }
        if let refused = checkDirectory(directory, warn: warn) { return refused }
        let client: ControlClient
        let graph: JSONValue
        do {
            client = try ControlClient.connect(path: path)
            // No time limit: asked before the daemon's first graph (PipeWire not up yet), the
            // recording begins with that graph, and the reply waits for it.
            switch try client.request(.record, reply: ControlWire.RecordResult.self, timeout: nil) {
            case .success(let result): graph = result.graph
            case .failure(let error):
                return ControlActions.refusal(error, command: "earshot record")
            }
        } catch {
            return CommandOutcome(standardError: "earshot record: \(error)\n", exitCode: ControlActions.unreachable)
        }
        let graphPath = "\(directory)/\(RecordingFiles.graph)"
        let eventsPath = "\(directory)/\(RecordingFiles.events)"
        var events: AppendingFile
        do {
            events = try RecordingFiles.start(in: directory, graph: graph)
        } catch {
            return CommandOutcome(standardError: "earshot record: \(error)\n", exitCode: 1)
        }
        defer { try? events.close() }
        started(directory)
        let deadline = duration.map { ContinuousClock.now + $0 }
        var lines = 0
        let ended: String
        while true {
            do {
                let line = try client.nextRecordedLine(until: deadline)
                try events.write(RecordingFiles.line(line))
                lines += 1
            } catch let error as ControlClientError {
                if case .timedOut = error { ended = "--duration reached" } else { ended = "the daemon ended the recording (\(error))" }
                break
            } catch {
                return CommandOutcome(standardError: "earshot record: \(error); \(lines) input(s) kept in \(eventsPath)\n", exitCode: 1)
            }
        }
        return CommandOutcome(standardError: "earshot record: \(ended); \(lines) input(s) in \(eventsPath), graph in \(graphPath)\n")
    }

    /// Refuses (exit 1) a directory another user owns; tells `warn` of one of the user's that
    /// others may write to (RecordingFiles.check). Before the daemon is asked, so nothing is
    /// recorded where it should not be.
    static func checkDirectory(_ directory: String, warn: (String) -> Void) -> CommandOutcome? {
        switch RecordingFiles.check(directory: directory) {
        case .fine: return nil
        case .warned(let why):
            warn("earshot record: warning: \(why)")
            return nil
        case .refused(let why):
            return CommandOutcome(standardError: "earshot record: \(why)\n", exitCode: 1)
        }
    }

    /// `90s`, `10m`, `2h`, `500ms`: nil when it is none of these.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Duration)] = [("ms", .milliseconds(1)), ("s", .seconds(1)), ("m", .seconds(60)), ("h", .seconds(3600))]
        for (suffix, unit) in units where text.hasSuffix(suffix) {
            guard let count = Int(text.dropLast(suffix.count)), count > 0, count <= 1_000_000 else { return nil }
            return unit * count
        }
        return nil
    }
}

extension RecordActions {
    /// `earshot record --since D`: the daemon's rolling recording (`[record] keep-hours`) from
    /// `since` ago, as one recording in `directory`: the graph of the segment holding that
    /// moment, then the events of it and every later segment, `at` counted from its start (a
    /// whole segment is kept, so the replay starts from a graph the inputs continue).
    static func assemble(recordings: String, since: Duration, into directory: String, now: Int64, warn: (String) -> Void = { _ in }) -> CommandOutcome {
        if let refused = checkDirectory(directory, warn: warn) { return refused }
        let starts = RollingRecordingSegments.list(in: recordings)
        guard !starts.isEmpty else {
            return CommandOutcome(
                standardError: "earshot record: no rolling recording in \(recordings): set [record] keep-hours in the config (docs/policy.md) and let the daemon run\n",
                exitCode: 1)
        }
        let cutoff = now - Int64(since.components.seconds) * 1000
        var first = starts.lastIndex { $0 <= cutoff } ?? starts.startIndex
        // A segment after a gap (the daemon stopped, a segment not written) does not follow on
        // from the ones before it: the replay starts there, never joining across the gap.
        var gapNote = ""
        if let gap = starts[first...].dropFirst().last(where: { RollingRecordingSegments.gap(before: $0, in: recordings) != nil }),
            let reason = RollingRecordingSegments.gap(before: gap, in: recordings)
        {
            first = starts.firstIndex(of: gap)!
            gapNote = "; inputs from \((now - gap) / 1000) s ago only: a gap before them (\(reason))"
        }
        let segments = starts[first...]
        let origin = segments.first!
        do {
            let graphText = Data(try InputFile.bytes("\(recordings)/\(origin)/\(RecordingFiles.graph)"))
            var events: AppendingFile
            do {
                events = try RecordingFiles.start(in: directory, graph: try JSONDecoder().decode(JSONValue.self, from: graphText))
            } catch let error as RecordingError {
                return CommandOutcome(standardError: "earshot record: \(error)\n", exitCode: 1)
            }
            defer { try? events.close() }
            var lines = 0
            for start in segments {
                let text = (try? InputFile.text("\(recordings)/\(start)/\(RecordingFiles.events)")) ?? ""
                for line in text.split(separator: "\n") {
                    // A line cut short (the daemon stopped mid-write) is left out.
                    guard case .object(var fields) = try? JSONValue.parse(String(line)), case .integer(let at)? = fields["at"] else { continue }
                    fields["at"] = .integer(at + start - origin)
                    try events.write(RecordingFiles.line(.object(fields)))
                    lines += 1
                }
            }
            return CommandOutcome(
                standardError: "earshot record: \(lines) input(s) from \(segments.count) segment(s) of \(recordings), the first from \(since) ago or earlier\(gapNote), in \(directory)\n")
        } catch {
            return CommandOutcome(standardError: "earshot record: \(error)\n", exitCode: 1)
        }
    }
}
