import Foundation

/// Short-lived tools (gdbus, systemd-analyze, scripts) run to completion, for tests. Daemons and
/// anything stopped by signal go through `ChildProcess` instead (empty signal mask).
public enum Shell {
    public struct Result {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `arguments` (the first looked up in PATH) with exactly `environment`, to completion.
    /// stderr goes to a file, so only stdout's pipe has to be drained while it runs.
    public static func run(_ arguments: [String], environment: [String: String]) throws -> Result {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-shell-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        defer { try? errorHandle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = try output.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: try String(contentsOf: errorFile, encoding: .utf8))
    }
}
