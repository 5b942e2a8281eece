import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `earshot daemon` refuses a state directory that is not the user's own, and a start with
/// no home at all, with exit 78 and a message saying what and where (issue 21, item 4).
@Suite("State directory at start", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct StateDirectoryStartTests {
    @Test(
        "a state directory writable by others, or another user's: exit 78 naming it, no control socket, the planted file untouched",
        arguments: ["world-writable", "group-writable", "another-owner"])
    func refusesADirectoryNotTheUsers(_ problem: String) async throws {
        if problem == "another-owner", getuid() != 0 {
            Issue.record("giving a directory to another user needs root (chown); this test runs as uid \(getuid())")
            return
        }
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            let directory = sandbox.stateDir.appendingPathComponent("earshot").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // What another user would plant: a registration of theirs.
            let planted = Data(#"{"version": 2, "registrations": [{"accessory": "AA:BB:CC:DD:EE:FF", "reporter": "org.evil", "capabilities": ["audio-switching", "placement"], "placement": "in-ear"}], "history": []}"#.utf8)
            try planted.write(to: URL(fileURLWithPath: "\(directory)/state.json"))
            let expected: String
            switch problem {
            case "world-writable":
                #expect(chmod(directory, 0o777) == 0)
                expected = "is writable by its group and others (mode 0777; it should be 0700)"
            case "group-writable":
                #expect(chmod(directory, 0o770) == 0)
                expected = "is writable by its group (mode 0770; it should be 0700)"
            default:
                #expect(chown(directory, 65534, 65534) == 0)
                expected = "is owned by uid 65534, not by this user (uid \(getuid()))"
            }
            let daemon = try sandbox.spawn("earshot-daemon", [try #require(EarshotBinary.url).path, "daemon"])
            #expect(try await offPool { daemon.waitForExit(timeout: .seconds(20)) } == 78)
            #expect(daemon.logTail().contains("cannot start: the state directory \(directory) \(expected); another user could plant registrations in it or read the state"), "\(daemon.logTail())")
            #expect(!FileManager.default.fileExists(atPath: sandbox.runtimeDir.appendingPathComponent("earshot/control").path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.json"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/state.json")) == planted)
        }
    }

    @Test("no HOME, no XDG_STATE_HOME and no home in the user database: exit 78 saying so, nothing under /tmp")
    func refusesWithoutAHome() async throws {
        guard getuid() == 0 else {
            Issue.record("running as a uid without a passwd entry needs root (setpriv); this test runs as uid \(getuid())")
            return
        }
        let binary = try #require(EarshotBinary.url).path
        // A uid with no passwd entry, and a runtime directory it may not even enter.
        let uid = 3_999_999_998
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-nohome-\(UUID().uuidString.prefix(8)).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let daemon = try ChildProcess(
            name: "earshot-no-home",
            arguments: ["setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary, "daemon"],
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "XDG_RUNTIME_DIR": "/nonexistent-earshot-runtime"], logFile: log)
        defer { daemon.stop() }
        #expect(try await offPool { daemon.waitForExit(timeout: .seconds(20)) } == 78)
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("cannot start: no place for the state file: XDG_STATE_HOME and HOME are not set (or not absolute paths) and the user database gives uid \(uid) no home directory"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/.local/state/earshot"))
    }
}
