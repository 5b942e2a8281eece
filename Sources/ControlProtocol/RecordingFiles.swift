import AudioGraph
import FoundationEssentials
import SystemBridge

/// The two files of a recording, as `earshot record` and the rolling recording write them and
/// `earshot eval` reads them: `graph.json` (pw-dump) and `events.jsonl` (one line per input).
public enum RecordingFiles {
    public static let graph = "graph.json"
    public static let events = "events.jsonl"

    /// Creates `directory` (0700), refusing one that already holds a recording (appending to
    /// it would make a script eval cannot replay), writes the graph (0600) and opens the events
    /// file for appending (0600).
    public static func start(in directory: String, graph: JSONValue) throws(RecordingError) -> AppendingFile {
        for name in [Self.graph, events] where FileSystem.exists("\(directory)/\(name)") {
            throw RecordingError("\(directory)/\(name) exists: record into another directory (--output)")
        }
        do {
            try FileSystem.createDirectory(directory, permissions: 0o700)
        } catch {
            throw RecordingError("cannot create \(directory): \(error.errno.description)")
        }
        // Checked again once it exists (the caller may have checked before it did).
        if case .refused(let why) = check(directory: directory) { throw RecordingError(why) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let text = try? encoder.encode(graph) + Data("\n".utf8) else { throw RecordingError("cannot encode the graph for \(directory)/\(Self.graph)") }
        // Through SystemBridge's door: a failure says the call and the errno (a full disk is
        // `write …: No space left on device (ENOSPC)`), and no half-written graph is left.
        do { try FileSystem.atomicWrite(text, to: "\(directory)/\(Self.graph)", permissions: 0o600) } catch { throw RecordingError("\(error)") }
        do { return try FileSystem.openForAppending("\(directory)/\(events)") } catch { throw RecordingError("\(error)") }
    }

    /// What `check(directory:)` found.
    public enum DirectoryCheck: Sendable, Equatable {
        /// Nothing there yet (it is created 0700), or a directory of the user's that only they
        /// can write to (or something that is no directory: creating the files says why).
        case fine
        /// Another user owns it: they could read, change or replace the recording.
        case refused(String)
        /// The user's, but others may write to it: said, and used.
        case warned(String)
    }

    /// Whether `directory` (a symbolic link followed) is fit to hold a recording, which tells
    /// what was played where and when: refused when another user owns it; warned about when
    /// everyone may write to it, or its group may and that group is not the user's own
    /// primary group (with a private group per user, a group-writable directory is common
    /// and harmless).
    public static func check(
        directory: String, user: UInt32 = CurrentProcess.userID, primaryGroup: UInt32 = CurrentProcess.groupID
    ) -> DirectoryCheck {
        guard let entry = try? FileSystem.entry(at: directory, followingSymbolicLinks: true), entry.kind == .directory else { return .fine }
        if entry.owner != user {
            return .refused(
                "\(directory) belongs to uid \(entry.owner), not to you (uid \(user)): its owner could read, change or replace the recording; record into a directory of your own (--output)")
        }
        let byOthers = entry.permissions & 0o002 != 0
        let byGroup = entry.permissions & 0o020 != 0 && entry.group != primaryGroup
        guard byOthers || byGroup else { return .fine }
        let who = byOthers ? "every user" : "group \(entry.group)"
        return .warned(
            "\(directory) is writable by \(who) (mode \(String(entry.permissions & 0o7777, radix: 8))): they could change or replace the recording (chmod go-w it, or record elsewhere)")
    }

    /// One recorded input: the line and its newline, written at once (a recording ended at
    /// any moment holds whole lines only).
    public static func line(_ value: JSONValue) -> [UInt8] {
        Array((value.canonicalText + "\n").utf8)
    }
}

public struct RecordingError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}


/// The segments of a rolling recording, read by the daemon (pruning) and `earshot record --since`.
public enum RollingRecordingSegments {
    /// In a segment that does not follow on from the one before it (the daemon was stopped, or
    /// a segment could not be written): inputs between them are missing, so a replay must not
    /// join the two. Its text says why. Segments of a daemon older than the marker have none.
    public static let gapMarker = "gap-before"

    /// The segments' starts (ms since the epoch), oldest first.
    public static func list(in directory: String) -> [Int64] {
        ((try? FileSystem.contentsOfDirectory(directory)) ?? []).compactMap { Int64($0) }.sorted()
    }

    /// Why inputs are missing before the segment that started at `start`, if they are.
    public static func gap(before start: Int64, in directory: String) -> String? {
        guard let text = try? InputFile.text("\(directory)/\(start)/\(gapMarker)") else { return nil }
        return text.trimmingWhitespace.isEmpty ? "inputs are missing" : String(text.trimmingWhitespace)
    }
}
