import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Short-lived tools (gdbus, systemd-analyze, scripts, the earshot CLI) run to completion, for
/// tests. Daemons and anything stopped by signal use `ChildProcess` directly.
///
/// Not `Foundation.Process`: on Linux its `run()` lists /proc/self/fd to close every descriptor
/// in the child, copying each entry's whole 256-byte `d_name` out of readdir's buffer — past
/// the end of a short last entry, which faults when that buffer ends at a page boundary. With
/// ≈ 1 400 descriptors open in the test process it did (CI: SIGSEGV in `Process.run()`, the
/// whole run lost). This spawns through `ChildProcess` (posix_spawn, descriptors close-on-exec).
public enum Shell {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String

        public init(status: Int32, standardOutput: String, standardError: String) {
            self.status = status
            self.standardOutput = standardOutput
            self.standardError = standardError
        }
    }

    /// Runs `arguments` (the first looked up in `environment`'s PATH) with exactly
    /// `environment` and stdin from /dev/null, to completion or `timeout` (then it is killed
    /// and this throws). stdout and stderr go to files, so nothing has to be drained meanwhile.
    public static func run(_ arguments: [String], environment: [String: String], timeout: Duration = .seconds(120)) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputFile = directory.appendingPathComponent("out")
        let errorFile = directory.appendingPathComponent("err")
        let output = open(outputFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw FixtureError("cannot create \(outputFile.path): \(String(cString: strerror(errno)))") }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                name: URL(fileURLWithPath: arguments.first ?? "").lastPathComponent, arguments: ["/usr/bin/env"] + arguments,
                environment: environment, logFile: errorFile, stdoutFD: output)
        } catch {
            close(output)
            throw error
        }
        close(output)
        guard let status = child.waitForExit(timeout: timeout) else {
            child.stop(grace: .seconds(1))
            throw FixtureError("\(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        return Result(
            status: status,
            standardOutput: (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")
    }
}
