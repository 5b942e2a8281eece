import AudioGraph
import Foundation
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
        for name in [Self.graph, events] where FileManager.default.fileExists(atPath: "\(directory)/\(name)") {
            throw RecordingError("\(directory)/\(name) exists: record into another directory (--output)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw RecordingError("cannot create \(directory): \(error.localizedDescription)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let text = try? encoder.encode(graph) + Data("\n".utf8),
            FileManager.default.createFile(atPath: "\(directory)/\(Self.graph)", contents: text, attributes: [.posixPermissions: 0o600])
        else { throw RecordingError("cannot write \(directory)/\(Self.graph)") }
        do { return try FileSystem.openForAppending("\(directory)/\(events)") } catch { throw RecordingError("\(error)") }
    }

    /// One recorded input: the line and its newline, written at once (a recording ended at
    /// any moment holds whole lines only).
    public static func line(_ value: JSONValue) -> [UInt8] {
        Array((value.canonicalText + "\n").utf8)
    }
}

public struct RecordingError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
