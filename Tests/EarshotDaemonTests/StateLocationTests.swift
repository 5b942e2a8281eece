import ControlProtocol
import EarshotDaemon
import Foundation
import SystemBridge
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where the state file lives and whose its directory is (issue 21, item 4): never a shared
/// directory such as /tmp, and only a directory that is the user's own.
@Suite("State location", .blockingCalls)
struct StateLocationTests {
    struct NoLookUp: Error {}

    @Test("XDG_STATE_HOME, else HOME, else the user database's home; only absolute paths count")
    func searchOrder() throws {
        let never: () throws -> String? = { Issue.record("the user database was asked"); return nil }
        #expect(try StateLocation.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], passwdHome: never) == "/s/earshot/state.json")
        #expect(try StateLocation.defaultPath(environment: ["HOME": "/h"], passwdHome: never) == "/h/.local/state/earshot/state.json")
        // An empty or relative variable is as good as unset (XDG's rule).
        #expect(try StateLocation.defaultPath(environment: ["XDG_STATE_HOME": "", "HOME": "/h"], passwdHome: never) == "/h/.local/state/earshot/state.json")
        #expect(try StateLocation.defaultPath(environment: ["XDG_STATE_HOME": "state", "HOME": "/h"], passwdHome: never) == "/h/.local/state/earshot/state.json")
        // No HOME: the passwd entry's home, not /tmp.
        #expect(try StateLocation.defaultPath(environment: [:]) { "/home/u" } == "/home/u/.local/state/earshot/state.json")
        #expect(try StateLocation.defaultPath(environment: ["HOME": ""]) { "/home/u" } == "/home/u/.local/state/earshot/state.json")
        #expect(try StateLocation.defaultPath(environment: ["HOME": "relative"]) { "/root" } == "/root/.local/state/earshot/state.json")
        #expect(try StateLocation.defaultPath(environment: [:]) { "/" } == "/.local/state/earshot/state.json")
        // The real lookup, for this test's own user.
        let home = try #require(try CurrentProcess.passwdHomeDirectory())
        #expect(try StateLocation.defaultPath(environment: [:]) == "\(home)/.local/state/earshot/state.json")
    }

    @Test("no home anywhere: refused, saying what to set; never a shared directory")
    func noHome() {
        for passwd: () throws -> String? in [{ nil }, { "" }, { "relative/home" }, { throw NoLookUp() }] {
            do {
                let path = try StateLocation.defaultPath(environment: [:], uid: 4242, passwdHome: passwd)
                Issue.record("a state path without a home: \(path)")
            } catch {
                #expect(error.uid == 4242)
                #expect(error.description.hasPrefix("no place for the state file: XDG_STATE_HOME and HOME are not set (or not absolute paths) and "))
                #expect(error.description.contains("set XDG_STATE_HOME or HOME, or start with --state FILE"))
                #expect(error.description.contains("never falls back to a shared directory such as /tmp"))
            }
        }
    }

    @Test("a state directory is the user's own: another owner, group or world write, or not a directory, is named as the problem")
    func directoryProblems() {
        func status(_ type: FileSystem.FileType = .directory, owner: UInt32 = 1000, mode: UInt16) -> FileSystem.Status {
            FileSystem.Status(type: type, identity: .init(device: 1, inode: 2), owner: owner, permissions: mode, size: 0)
        }
        #expect(StateStore.problem(with: status(mode: 0o700), uid: 1000) == nil)
        #expect(StateStore.problem(with: status(mode: 0o755), uid: 1000) == nil)
        #expect(StateStore.problem(with: status(owner: 1001, mode: 0o700), uid: 1000) == "is owned by uid 1001, not by this user (uid 1000)")
        #expect(StateStore.problem(with: status(mode: 0o777), uid: 1000) == "is writable by its group and others (mode 0777; it should be 0700)")
        #expect(StateStore.problem(with: status(mode: 0o1777), uid: 1000) == "is writable by its group and others (mode 01777; it should be 0700)")
        #expect(StateStore.problem(with: status(mode: 0o770), uid: 1000) == "is writable by its group (mode 0770; it should be 0700)")
        #expect(StateStore.problem(with: status(mode: 0o702), uid: 1000) == "is writable by others (mode 0702; it should be 0700)")
        #expect(StateStore.problem(with: status(.regular, mode: 0o600), uid: 1000) == "is a regular file, not a directory")
    }

    @Test("prepareDirectory makes a missing directory (and those above it) 0700, and refuses one writable by others")
    func prepare() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-stateloc-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = StateStore(path: "\(root)/state/earshot/state.json")
        try store.prepareDirectory()
        for directory in ["\(root)/state", "\(root)/state/earshot"] {
            let status = try #require(try FileSystem.status(of: directory))
            #expect(status.type == .directory && status.permissions == 0o700 && status.owner == CurrentProcess.userID, "\(directory)")
        }
        #expect(chmod("\(root)/state/earshot", 0o777) == 0)
        #expect(throws: StateStore.UnsafeDirectory(directory: "\(root)/state/earshot", problem: "is writable by its group and others (mode 0777; it should be 0700)")) {
            try store.prepareDirectory()
        }
        let error = StateStore.UnsafeDirectory(directory: "/d", problem: "is owned by uid 1001, not by this user (uid 1000)")
        #expect(error.description == "the state directory /d is owned by uid 1001, not by this user (uid 1000); another user could plant registrations in it or read the state: refusing to use it (fix it, or start with --state FILE in a directory of your own)")
        // Another owner: as root the directory can be given away (chown needs root).
        guard getuid() == 0 else {
            Issue.record("giving a directory to another user needs root; this test runs as uid \(getuid())")
            return
        }
        #expect(chmod("\(root)/state/earshot", 0o700) == 0)
        #expect(chown("\(root)/state/earshot", 65534, 65534) == 0)
        #expect(throws: StateStore.UnsafeDirectory(directory: "\(root)/state/earshot", problem: "is owned by uid 65534, not by this user (uid 0)")) {
            try store.prepareDirectory()
        }
    }
}
