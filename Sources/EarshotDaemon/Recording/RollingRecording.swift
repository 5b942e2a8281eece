import ControlProtocol
import AudioGraph
import FoundationEssentials
import Logging
import SystemBridge
import SystemPackage

/// `[record] keep-hours`: the daemon's own recording of its inputs, so a surprise can be
/// replayed after the fact (`earshot record --since 2h`). Hourly segments under the state
/// directory's `recordings/` (a directory per segment, named by its start in ms since the
/// epoch, 0700, holding `graph.json` and `events.jsonl`, 0600, as `earshot record` writes
/// them); segments older than keep-hours are removed as each new one starts; a segment's
/// events stop at `maximumSegmentBytes` (said once).
actor RollingRecording {
    static let segmentLength: Duration = .seconds(3600)
    /// How long a segment lasts: an hour (tests take less).
    let segmentLength: Duration
    static let maximumSegmentBytes = 64 << 20

    let directory: String
    private let daemon: Daemon
    private let logger: Logger
    private var keepHours = 0
    private var task: Task<Void, Never>?
    /// The daemon's first graph has come: a segment starts from a real graph, never from the
    /// empty one before PipeWire answered (its nodes would replay as arrivals).
    private var graphCame = false
    private var toldOfGraph = false

    /// `recordings/` beside the state file.
    static func directory(statePath: String) -> String {
        FilePath(statePath).removingLastComponent().string + "/recordings"
    }

    init(directory: String, daemon: Daemon, logger: Logger, segmentLength: Duration = RollingRecording.segmentLength) {
        self.directory = directory
        self.daemon = daemon
        self.logger = logger
        self.segmentLength = segmentLength
    }

    /// The config's keep-hours: 0 stops recording (the segments stay until they age out of a
    /// later setting, or are deleted by hand); more starts it.
    func apply(keepHours hours: Int) async {
        let was = keepHours
        keepHours = hours
        if hours == 0 {
            task?.cancel()
            // The next run waits for this one to end: a cancelled run must not touch the state
            // of the next (its gap marker, its failure said once).
            stopping = task
            task = nil
            if was > 0 { logger.info("rolling recording stopped ([record] keep-hours = 0)") }
            return
        }
        guard task == nil else { return }
        guard graphCame else {
            if !toldOfGraph {
                toldOfGraph = true
                await daemon.onFirstGraph { [weak self] in await self?.firstGraphCame() }
            }
            return
        }
        logger.info("keeping the last \(hours) h of inputs in \(directory) (earshot record --since)")
        let previous = stopping
        stopping = nil
        task = Task {
            await previous?.value
            await self.record()
        }
    }

    /// A run cancelled by keep-hours = 0, until the next run has waited for it.
    private var stopping: Task<Void, Never>?

    private func firstGraphCame() async {
        graphCame = true
        await apply(keepHours: keepHours)
    }

    /// The daemon stopped (its recordings ended): waits until the last lines are on disk.
    func stop() async {
        let running = task
        task = nil
        await running?.value
    }

    private func record() async {
        // A run's first segment never follows on from an older one: the inputs in between (the
        // daemon stopped, or keep-hours was 0) were not recorded.
        (continuous, gapReason, failing) = (false, Self.notRecordingBefore, false)
        do {
            try FileSystem.createDirectory(directory, permissions: 0o700)
        } catch {
            logger.warning("rolling recording: cannot create \(directory): \(error.errno.description); not recording")
            return
        }
        while !Task.isCancelled {
            // nil: the daemon stopped, or runs too many recordings (eight `earshot record`s).
            guard let recording = await daemon.startRecording() else { return }
            if Task.isCancelled {
                // Iterating in a cancelled task ends the recording at once (the daemon's slot
                // for it is freed), and this run opens nothing.
                for await _ in recording.lines {}
                return
            }
            let start = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            prune(before: start - Int64(keepHours) * 3_600_000)
            // A segment that cannot be opened or written is not retried until the next one, an
            // hour later: its inputs go by unrecorded (a full disk is not hammered, and makes
            // no directory or warning per input). Said once until a segment is written again.
            let file = openSegment(start: start, graph: recording.graph, gap: continuous ? nil : gapReason)
            let (logger, segmentLength) = (logger, segmentLength)
            let wasFailing = failing
            let failure: String? = await withTaskGroup(of: String?.self) { group in
                group.addTask { await Self.write(recording.lines, to: file, logger: logger, warn: !wasFailing && file != nil) }
                group.addTask {
                    try? await Task.sleep(for: segmentLength)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                var failure = first
                for await other in group where failure == nil { failure = other }
                return failure
            }
            // Cancelled (keep-hours = 0, the daemon stopping): the segment's outcome is no one's.
            guard !Task.isCancelled else { return }
            if let failure {
                failing = true
                (continuous, gapReason) = (false, "the segment before could not be written (\(failure))")
            } else if file == nil {
                failing = true
                (continuous, gapReason) = (false, "a segment could not be started")
            } else {
                (continuous, gapReason) = (true, "")
                if failing {
                    failing = false
                    logger.notice("rolling recording: segment \(start) written; recording again")
                }
            }
        }
    }

    /// The segment before the next one was written whole, in this run: the next one follows on
    /// from it. False at the start of a run (the daemon was not recording before it).
    private var continuous = false
    /// Why the next segment does not follow on, for its gap marker.
    private var gapReason = RollingRecording.notRecordingBefore
    static let notRecordingBefore = "the daemon was not recording before this segment (stopped, or keep-hours was 0)"

    /// A segment could not be opened or written, and was said: said again only after a segment
    /// is written whole.
    private var failing = false

    /// Appends each line until the stream ends (or this task is cancelled: the segment's hour
    /// is up), stopping at `maximumSegmentBytes`. Without a file, or after a write failed, the
    /// lines are only drained. Returns why a write failed, if one did (warned about if `warn`).
    private static func write(_ lines: AsyncStream<JSONValue>, to file: AppendingFile?, logger: Logger, warn: Bool) async -> String? {
        var file = file
        var toldFull = false
        var failure: String?
        for await line in lines {
            guard var open = file else { continue }
            let bytes = RecordingFiles.line(line)
            guard open.size + bytes.count <= maximumSegmentBytes else {
                if !toldFull { logger.warning("rolling recording: a segment reached \(maximumSegmentBytes >> 20) MiB; its later inputs are not kept") }
                toldFull = true
                continue
            }
            do throws(SystemError) {
                try open.write(bytes)
                file = open
            } catch {
                failure = "\(error)"
                if warn { logger.warning("rolling recording: \(error); inputs are not kept until the next segment, in an hour") }
                try? open.close()
                file = nil
            }
        }
        if let file { try? file.close() }
        return failure
    }

    /// Starts the segment `start`; `gap`: why it does not follow on from an older segment (said
    /// in its gap marker, when there is an older one to not join).
    private func openSegment(start: Int64, graph: JSONValue, gap: String?) -> AppendingFile? {
        let segment = "\(directory)/\(start)"
        let existed = FileSystem.exists(segment)
        do {
            let file = try RecordingFiles.start(in: segment, graph: graph)
            if let gap, RollingRecordingSegments.list(in: directory).contains(where: { $0 < start }) {
                do {
                    try FileSystem.atomicWrite(Array((gap + "\n").utf8), to: "\(segment)/\(RollingRecordingSegments.gapMarker)")
                } catch {
                    // Without its marker the segment would be joined to the one before: drop it.
                    try? file.close()
                    throw RecordingError("\(error)")
                }
            }
            logger.debug("rolling recording: segment \(start)\(gap != nil ? " (after a gap)" : "")")
            return file
        } catch {
            if !failing { logger.warning("rolling recording: \(error); not recording until the next segment, in an hour") }
            // What this failed start made (the directory, part of graph.json) goes, never a
            // segment that was there before it (RecordingFiles.start refuses to reuse one).
            if !existed { _ = try? FileSystem.removeTree(segment) }
            return nil
        }
    }

    /// Removes the segments that started before `cutoff` (ms since the epoch), except the
    /// newest of them: it holds the inputs from the cutoff on.
    private func prune(before cutoff: Int64) {
        let starts = RollingRecordingSegments.list(in: directory)
        let old = starts.filter { $0 < cutoff }
        for start in old.dropLast() { _ = try? FileSystem.removeTree("\(directory)/\(start)") }
    }
}
