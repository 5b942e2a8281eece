import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a reload must survive (issue 21): whatever is put at the config path, a config that
/// came from a pipe, a link that leads nowhere, and the config's directory coming and going.
/// Each starts a real daemon on a private PipeWire with a config that keeps the (worn)
/// headphones out, so a config lost to the built-in defaults shows as the output moving.
extension DaemonReliabilityTests {
    static let ignoreHeadphones = quickTiming + "[[rule]]\nmatch = { \"node.name\" = \"bluez_output.*\" }\nignore = true\n"

    static func configPath(_ sandbox: PipeWireSandbox) -> String {
        sandbox.configDir.appendingPathComponent("earshot/earshot.toml").path
    }

    /// The daemon's resident set, in bytes (VmRSS).
    static func residentBytes(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw FixtureError("no VmRSS in /proc/\(pid)/status") }
        return kilobytes * 1024
    }

    /// Renames `source` over `destination`: one event in the watched directory (IN_MOVED_TO).
    static func move(_ source: String, over destination: String) throws {
        guard rename(source, destination) == 0 else { throw FixtureError("rename \(source): \(String(cString: strerror(errno)))") }
    }

    @Test("reload meets a FIFO, then a 1 GiB file at the config path: each refused at once with what it is, the last good config stays, the daemon answers and stays small; a regular file again reloads")
    func reloadRefusesFIFOAndHugeFile() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            try Self.writeConfig(sandbox, Self.ignoreHeadphones)
            let path = Self.configPath(sandbox)
            let daemon = try await D.startOffPool(in: sandbox)
            let session = try DaemonSession(path: daemon.socketPath)
            try await session.register(D.address, placement: "on-head")
            #expect(try await daemon.settle(session) == D.speakers)

            // A FIFO nobody writes to: the watcher's reload (the rename) and a SIGHUP both refuse it.
            let fifo = sandbox.root.appendingPathComponent("next.fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            try Self.move(fifo, over: path)
            let refusedFIFO = "\(path):1:1: cannot read the file: it is a FIFO (named pipe), not a regular file (a reload reads only a regular file: the last good config stays)"
            try await daemon.process.waitForLog(containing: refusedFIFO, timeout: .seconds(10))
            daemon.process.signal(SIGHUP)
            try await daemon.process.waitForLog(containing: "config not reloaded (SIGHUP): \(refusedFIFO)", timeout: .seconds(10))
            try await daemon.process.waitForLog(containing: "keeping the last good config from \(path)", occurrences: 2, timeout: .seconds(10))
            // Answered at all: a reload that opened the FIFO would hang the daemon (by order, not
            // a bound in seconds, issue 28).
            _ = try await session.status()
            #expect(try await daemon.settle(session) == D.speakers)

            // 1 GiB (sparse): refused by its size, unread.
            let huge = sandbox.root.appendingPathComponent("huge.toml").path
            #expect(FileManager.default.createFile(atPath: huge, contents: nil))
            #expect(truncate(huge, 1 << 30) == 0)
            try Self.move(huge, over: path)
            try await daemon.process.waitForLog(
                containing: "\(path):1:1: cannot read the file: it is 1073741824 bytes, over the limit of 16 MiB", timeout: .seconds(10))
            daemon.process.signal(SIGHUP)
            try await daemon.process.waitForLog(containing: "config not reloaded (SIGHUP): \(path):1:1: cannot read the file: it is 1073741824 bytes", timeout: .seconds(10))
            let resident = try Self.residentBytes(of: daemon.process.pid)
            #expect(resident < 200 << 20, "RSS \(resident >> 20) MiB after a 1 GiB config")
            #expect(try await daemon.settle(session) == D.speakers)

            // A regular file again: nothing was left blocked, the reload goes through.
            try Self.writeConfig(sandbox, Self.quickTiming)
            try await daemon.process.waitForLog(containing: "config reloaded from \(path)", timeout: .seconds(10))
            #expect(try await daemon.settle(session) == D.headphones)
            #expect(daemon.process.exitStatus == nil)
        }
    }

    @Test(
        "a config given as --config - or a FIFO is read once: a reload keeps it, and says so once",
        arguments: ["stdin", "fifo"])
    func readOnceConfigIsKept(from kind: String) async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            guard let binary = EarshotBinary.url?.path else { throw FixtureError("earshot binary not built") }
            let text = Array(Self.ignoreHeadphones.utf8)
            let process: ChildProcess
            let name: String
            if kind == "stdin" {
                let (readEnd, writeEnd) = ChildProcess.makePipe()
                #expect(write(writeEnd, text, text.count) == text.count)
                close(writeEnd)
                process = try sandbox.spawn("earshot-daemon", [binary, "daemon", "--verbose", "--config", "-"], stdinFD: readEnd)
                close(readEnd)
                name = "<stdin>"
            } else {
                let fifo = sandbox.root.appendingPathComponent("config.fifo").path
                #expect(mkfifo(fifo, 0o600) == 0)
                process = try sandbox.spawn("earshot-daemon", [binary, "daemon", "--verbose", "--config", fifo])
                // The daemon's open waits for this writer, as `<(…)` has one.
                try await offPool {
                    let fd = open(fifo, O_WRONLY)
                    guard fd >= 0 else { throw FixtureError("open \(fifo): \(String(cString: strerror(errno)))") }
                    defer { close(fd) }
                    guard write(fd, text, text.count) == text.count else { throw FixtureError("short write to \(fifo)") }
                }
                name = fifo
            }
            let daemon = DaemonFixture(sandbox: sandbox, binary: binary, process: process)
            try await offPool { try sandbox.waitForFile(daemon.socketPath, createdBy: process) }
            let what = kind == "stdin" ? "standard input" : "a pipe"
            let session = try DaemonSession(path: daemon.socketPath)
            try await session.register(D.address, placement: "on-head")
            #expect(try await daemon.settle(session) == D.speakers)

            process.signal(SIGHUP)
            try await process.waitForLog(
                containing: "config not reloaded (SIGHUP): \(name) was read once at start, from \(what), and cannot be read again; keeping the config read then")
            process.signal(SIGHUP)
            // The second says nothing more than a debug line.
            try await process.waitForLog(containing: "\(name) was read once at start", occurrences: 2)
            let log = try String(contentsOf: try #require(process.logFile), encoding: .utf8)
            #expect(log.components(separatedBy: "cannot be read again").count - 1 == 1)
            #expect(!log.contains("config reloaded from"))
            #expect(try await daemon.settle(session) == D.speakers)
            #expect(log.contains("config \(name) (read once, from \(what): a reload keeps it)"))
        }
    }

    @Test(
        "the config is a link that now leads nowhere or loops: a reload is an error and the last good config stays (never the built-in defaults)",
        arguments: ["dangling", "looping"])
    func brokenLinkKeepsConfig(_ breakage: String) async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            let dotfiles = sandbox.root.appendingPathComponent("dotfiles")
            try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
            let target = dotfiles.appendingPathComponent("earshot.toml").path
            try Self.ignoreHeadphones.write(toFile: target, atomically: true, encoding: .utf8)
            let path = Self.configPath(sandbox)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let daemon = try await D.startOffPool(in: sandbox)
            let session = try DaemonSession(path: daemon.socketPath)
            try await session.register(D.address, placement: "on-head")
            #expect(try await daemon.settle(session) == D.speakers)

            let reason: String
            if breakage == "dangling" {
                // The dotfiles moved: nothing happens in the watched directory.
                try Self.move(dotfiles.path, over: sandbox.root.appendingPathComponent("dotfiles.moved").path)
                reason = "No such file or directory"
            } else {
                let link = sandbox.root.appendingPathComponent("loop.toml").path
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
                try Self.move(link, over: path)  // path → path
                reason = "Too many levels of symbolic links"
            }
            daemon.process.signal(SIGHUP)
            try await daemon.process.waitForLog(containing: "config not reloaded (SIGHUP): \(path):1:1: cannot read the file: \(reason)", timeout: .seconds(10))
            try await daemon.process.waitForLog(containing: "keeping the last good config from \(path)", timeout: .seconds(10))
            #expect(try await daemon.settle(session) == D.speakers)
            let log = try String(contentsOf: try #require(daemon.process.logFile), encoding: .utf8)
            #expect(!log.contains("config reloaded from built-in defaults"))
        }
    }

    @Test(
        "at start, a dangling link or a FIFO at the searched config path: exit 78 naming it, at once (no hang, no fall-back to the defaults)",
        arguments: ["dangling", "fifo"])
    func unusableConfigAtStart(_ kind: String) async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            let path = Self.configPath(sandbox)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let reason: String
            if kind == "dangling" {
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: sandbox.root.appendingPathComponent("dotfiles/earshot.toml").path)
                reason = "No such file or directory"
            } else {
                #expect(mkfifo(path, 0o600) == 0)
                reason = "it is a FIFO (named pipe), not a regular file (only a file given with --config may be a pipe or a FIFO)"
            }
            let daemon = try sandbox.spawn("earshot-daemon", [try #require(EarshotBinary.url).path, "daemon"])
            #expect(try await offPool { daemon.waitForExit(timeout: .seconds(10)) } == 78)
            #expect(daemon.logTail().contains("config: \(path):1:1: cannot read the file: \(reason)"), "\(daemon.logTail())")
        }
    }

    @Test("the config's directory missing at start (two levels), then made: watched through its parent, the new file is read; deleted and made again: edits are seen again")
    func watcherFollowsTheDirectory() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            guard let binary = EarshotBinary.url?.path else { throw FixtureError("earshot binary not built") }
            let configHome = sandbox.root.appendingPathComponent("late/config")
            let directory = configHome.appendingPathComponent("earshot").path
            let path = "\(directory)/earshot.toml"
            let process = try sandbox.spawn(
                "earshot-daemon", [binary, "daemon", "--verbose"], extraEnvironment: ["XDG_CONFIG_HOME": configHome.path])
            let daemon = DaemonFixture(sandbox: sandbox, binary: binary, process: process)
            try await offPool { try sandbox.waitForFile(daemon.socketPath, createdBy: process) }
            let watchingRoot = "config: \(directory) does not exist: watching \(sandbox.root.path) until it does (for earshot.toml)"
            try await process.waitForLog(containing: watchingRoot)
            let session = try DaemonSession(path: daemon.socketPath)
            try await session.register(D.address, placement: "on-head")
            #expect(try await daemon.settle(session) == D.headphones)

            func writeConfig(_ text: String) throws {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
            try writeConfig(Self.ignoreHeadphones)
            try await process.waitForLog(containing: "config: watching \(directory) for earshot.toml")
            try await process.waitForLog(containing: "config reloaded from \(path)")
            #expect(try await daemon.settle(session) == D.speakers)

            // Deleted: the watch goes up to the config home; the defaults apply.
            try FileManager.default.removeItem(atPath: directory)
            try await process.waitForLog(containing: "config: \(directory) does not exist: watching \(configHome.path) until it does (for earshot.toml)")
            #expect(try await daemon.settle(session) == D.headphones)
            // Made again: watched again, and an edit is read.
            try writeConfig(Self.ignoreHeadphones)
            try await process.waitForLog(containing: "config: watching \(directory) for earshot.toml", occurrences: 2)
            try await process.waitForLog(containing: "config reloaded from \(path)", occurrences: 2)
            #expect(try await daemon.settle(session) == D.speakers)
            try writeConfig(Self.quickTiming)
            try await process.waitForLog(containing: "config reloaded from \(path)", occurrences: 3)
            #expect(try await daemon.settle(session) == D.headphones)

            // Said once at start where it watched; after that only each move.
            let log = try String(contentsOf: try #require(process.logFile), encoding: .utf8)
            #expect(log.components(separatedBy: watchingRoot).count - 1 == 1)
        }
    }
}
