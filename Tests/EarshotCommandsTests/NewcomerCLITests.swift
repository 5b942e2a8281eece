@testable import ControlProtocol
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Traps a newcomer falls into: a register whose warning was never shown, `eval` without
/// arguments, `scripts/sandbox --help`, a recording into someone else's directory.
@Suite("newcomer traps", .timeLimit(.minutes(2)), .blockingCalls)
struct NewcomerCLITests {
    @Test("accessory register of a node.name no sink has: exit 0, and the daemon's warning on stderr (escaped when it quotes control characters)")
    func registerWarning() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            let daemon = try DaemonFixture.start(in: sandbox)
            func register(_ accessory: String) throws -> Shell.Result {
                try Shell.run(
                    [daemon.binary, "accessory", "register", accessory, "--capabilities", "placement", "--placement", "off-head"],
                    environment: sandbox.environment)
            }
            let missing = try register("Sandbox Headphones")
            #expect(missing.status == 0, "\(missing.standardError)")
            #expect(missing.standardOutput.hasPrefix("registered Sandbox Headphones"))
            #expect(missing.standardError.hasPrefix(#"earshot: warning: no sink is named "Sandbox Headphones" now: the registration applies once one appears"#), "\(missing.standardError)")
            #expect(missing.standardError.split(separator: "\n").count == 1)

            let present = try register(DaemonFixture.speakers)
            #expect(present.status == 0)
            #expect(present.standardError.isEmpty, "a sink has that name: \(present.standardError)")

            let hostile = try register("evil\u{1B}]0;pwned\u{07}")
            #expect(hostile.status == 0)
            #expect(hostile.standardOutput.hasPrefix(#"registered evil\u{1B}]0;pwned\u{07}"#), "\(hostile.standardOutput)")
            #expect(hostile.standardError.hasPrefix(#"earshot: warning: no sink is named "evil\u{1B}]0;pwned\u{07}" now"#), "\(hostile.standardError)")
        }
    }

    // MARK: scripts/sandbox

    /// A PATH whose pipewire, dbus-daemon, wireplumber, mpv and pw-record only note that they
    /// were started (in `started`) and exit.
    struct StubbedPath {
        let root: URL
        var started: URL { root.appendingPathComponent("started") }
        var environment: [String: String] {
            [
                "PATH": root.appendingPathComponent("bin").path + ":/usr/local/bin:/usr/bin:/bin",
                "XDG_RUNTIME_DIR": root.appendingPathComponent("runtime").path, "XDG_STATE_HOME": root.appendingPathComponent("state").path,
                "XDG_CONFIG_HOME": root.appendingPathComponent("config").path, "HOME": root.path,
            ]
        }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-sandbox-help-\(UUID().uuidString.prefix(8))")
            let bin = root.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            for tool in ["pipewire", "dbus-daemon", "wireplumber", "mpv", "pw-record", "pw-cli"] {
                let stub = bin.appendingPathComponent(tool)
                try "#!/bin/sh\necho \"$0 $*\" >> '\(started.path)'\n".write(to: stub, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
            }
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test("scripts/sandbox -h and --help print its usage and exit 0 at once, starting nothing", arguments: ["--help", "-h"])
    func sandboxHelp(_ flag: String) throws {
        let path = try StubbedPath()
        defer { path.remove() }
        let script = EarshotBinary.repository.appendingPathComponent("scripts/sandbox").path
        let began = ContinuousClock.now
        let result = try Shell.run(["bash", script, flag], environment: path.environment, timeout: .seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("usage: scripts/sandbox [--stack 1.4] [--no-wireplumber] [--] [COMMAND...]"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("-h, --help"))
        // At once, waiting for nothing: shown by nothing started (below), not by a bound in
        // seconds (issue 28); the run's own timeout guards a hang.
        _ = began
        #expect(!FileManager.default.fileExists(atPath: path.started.path), "started: \((try? String(contentsOf: path.started, encoding: .utf8)) ?? "")")
    }

    @Test("scripts/sandbox with an unknown option: exit 2 with the usage on stderr, starting nothing")
    func sandboxUnknownOption() throws {
        let path = try StubbedPath()
        defer { path.remove() }
        let script = EarshotBinary.repository.appendingPathComponent("scripts/sandbox").path
        let result = try Shell.run(["bash", script, "--verbose"], environment: path.environment, timeout: .seconds(30))
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("sandbox: unknown option --verbose\nusage: scripts/sandbox"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: path.started.path))
    }

    // MARK: earshot record --output

    /// A scratch directory (0700) and an environment whose daemon is not reachable.
    struct Scratch {
        let root: URL
        var environment: [String: String] {
            [
                "XDG_RUNTIME_DIR": root.appendingPathComponent("runtime").path, "XDG_STATE_HOME": root.appendingPathComponent("state").path,
                "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            ]
        }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-record-dir-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }

        func directory(_ name: String, mode: mode_t) throws -> String {
            let path = root.appendingPathComponent(name).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            #expect(chmod(path, mode) == 0)
            return path
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test("record --output DIR another user owns: refused (exit 1) naming DIR and why, before the daemon is asked; nothing written there")
    func recordIntoAnotherUsersDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // As root: a directory given to nobody (65534). As anyone else: /, which root owns.
        let directory: String
        let owner: UInt32
        if getuid() == 0 {
            directory = try scratch.directory("theirs", mode: 0o755)
            #expect(chown(directory, 65534, 65534) == 0)
            owner = 65534
        } else {
            directory = "/"
            owner = 0
        }
        let result = try EarshotBinary.run(["record", "--output", directory], environment: scratch.environment)
        #expect(result.status == 1, "exit 1 (refused), not 3 (no daemon): \(result.standardError)")
        #expect(result.standardError.hasPrefix("earshot record: \(directory) belongs to uid \(owner), not to you (uid \(getuid())): "), "\(result.standardError)")
        #expect(result.standardError.contains("--output"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.hasPrefix("graph.json") && !$0.hasPrefix("events.jsonl") })
    }

    @Test("record --output DIR of yours that every user may write to: a warning naming DIR and its mode, and the recording goes on")
    func recordIntoWorldWritableDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let open = try scratch.directory("open", mode: 0o777)
        let result = try EarshotBinary.run(["record", "--output", open], environment: scratch.environment)
        #expect(result.status == 3, "then the daemon is asked (none here): \(result.standardError)")
        #expect(result.standardError.hasPrefix("earshot record: warning: \(open) is writable by every user (mode 777): "), "\(result.standardError)")

        // Group-writable, the group the user's own primary group: said nothing of.
        let shared = try scratch.directory("private-group", mode: 0o770)
        let quiet = try EarshotBinary.run(["record", "--output", shared], environment: scratch.environment)
        #expect(quiet.status == 3)
        #expect(!quiet.standardError.contains("warning"), "\(quiet.standardError)")
    }

    @Test("RecordingFiles.check: another owner refused, others' write bits warned, the user's own private directory fine")
    func directoryCheck() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mine = try scratch.directory("mine", mode: 0o700)
        let uid = getuid()
        let gid = getgid()
        #expect(RecordingFiles.check(directory: mine, user: uid, primaryGroup: gid) == .fine)
        #expect(RecordingFiles.check(directory: scratch.root.appendingPathComponent("missing").path) == .fine)
        guard case .refused(let why) = RecordingFiles.check(directory: mine, user: uid &+ 1, primaryGroup: gid) else {
            Issue.record("another user's directory accepted")
            return
        }
        #expect(why.contains("\(mine) belongs to uid \(uid), not to you (uid \(uid &+ 1))"))
        let group = try scratch.directory("group", mode: 0o775)
        #expect(RecordingFiles.check(directory: group, user: uid, primaryGroup: gid) == .fine, "the user's own group")
        guard case .warned(let shared) = RecordingFiles.check(directory: group, user: uid, primaryGroup: gid &+ 1) else {
            Issue.record("a directory another group may write to passed")
            return
        }
        #expect(shared.contains("writable by group \(gid) (mode 775)"))
        // A symbolic link is followed: the directory it names is checked.
        let link = scratch.root.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: mine)
        #expect(RecordingFiles.check(directory: link, user: uid &+ 1, primaryGroup: gid) != .fine)
    }
}
