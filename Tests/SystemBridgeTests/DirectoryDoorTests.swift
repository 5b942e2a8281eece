import Foundation
import SystemBridge
import SystemPackage
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The doors for directories and for file arguments (issue 29: one door for files), each
/// reached by fault injection as the older doors are.
@Suite("Directory and input file doors", .timeLimit(.minutes(1)), .blockingCalls)
struct DirectoryDoorTests {
    @Test("createDirectory makes every missing level with exactly the mode asked, whatever the umask; one already there is kept as it is")
    func createsMissingLevels() throws {
        try withTemporaryDirectory { root in
            let old = umask(0o077)
            defer { umask(old) }
            try FileSystem.createDirectory("\(root)/a/b/c", permissions: 0o750)
            for level in ["a", "a/b", "a/b/c"] {
                let status = try #require(try FileSystem.status(of: "\(root)/\(level)"))
                #expect(status.type == .directory && status.permissions == 0o750, "\(level): \(status)")
            }
            try FileSystem.setPermissions(0o755, of: "\(root)/a")
            try FileSystem.createDirectory("\(root)/a", permissions: 0o700)
            #expect(try FileSystem.status(of: "\(root)/a")?.permissions == 0o755)
        }
    }

    @Test("createDirectory over a file names the path asked and the system's reason: EEXIST for the file itself, ENOTDIR for a file above it")
    func refusesAFile() throws {
        try withTemporaryDirectory { root in
            try FileSystem.atomicWrite(Array("x".utf8), to: "\(root)/file")
            #expect(throws: SystemError("mkdir", path: "\(root)/file", errno: .fileExists)) { try FileSystem.createDirectory("\(root)/file") }
            #expect(throws: SystemError("mkdir", path: "\(root)/file/deeper", errno: .notDirectory)) {
                try FileSystem.createDirectory("\(root)/file/deeper")
            }
        }
    }

    @Test("contentsOfDirectory lists the names; removeTree removes a directory with what is in it, a file, and nothing")
    func listsAndRemoves() throws {
        try withTemporaryDirectory { root in
            try FileSystem.createDirectory("\(root)/tree/inner")
            try FileSystem.atomicWrite(Array("1".utf8), to: "\(root)/tree/one")
            try FileSystem.atomicWrite(Array("2".utf8), to: "\(root)/tree/inner/two")
            #expect(try FileSystem.contentsOfDirectory("\(root)/tree").sorted() == ["inner", "one"])
            #expect(try FileSystem.contents(of: "\(root)/tree/inner/two") == Array("2".utf8))
            #expect(try FileSystem.contents(of: "\(root)/tree/absent") == nil)
            #expect(FileSystem.exists("\(root)/tree/one") && !FileSystem.exists("\(root)/tree/absent"))
            #expect(try FileSystem.removeTree("\(root)/tree"))
            #expect(!FileSystem.exists("\(root)/tree"))
            #expect(try !FileSystem.removeTree("\(root)/tree"))
            #expect(throws: SystemError("opendir", path: "\(root)/tree", errno: .noSuchFileOrDirectory)) {
                try FileSystem.contentsOfDirectory("\(root)/tree")
            }
        }
    }

    #if DEBUG  // FaultInjection exists in debug builds only (the tests').
    @Test("mkdir, opendir, a read and an open of an input file fail where a fault is injected, each naming its call and path")
    func faultsReachTheNewDoors() throws {
        try withTemporaryDirectory { root in
            let mkdir = FaultInjection.inject(.readOnlyFileSystem, into: "mkdir", onPathsContaining: root, times: 1)
            #expect(throws: SystemError("mkdir", path: "\(root)/a/b", errno: .readOnlyFileSystem)) { try FileSystem.createDirectory("\(root)/a/b") }
            #expect(FaultInjection.uses(of: mkdir) == 1)
            try FileSystem.createDirectory("\(root)/a/b")
            FaultInjection.inject(.permissionDenied, into: "opendir", onPathsContaining: root, times: 1)
            #expect(throws: SystemError("opendir", path: "\(root)/a", errno: .permissionDenied)) { try FileSystem.contentsOfDirectory("\(root)/a") }
            let path = "\(root)/input.json"
            try FileSystem.atomicWrite(Array("{}".utf8), to: path)
            FaultInjection.inject(.ioError, into: "read", onPathsContaining: path, times: 1)
            #expect(throws: InputFile.Failure(path: path, reason: "Input/output error")) { try InputFile.bytes(path) }
            FaultInjection.inject(.permissionDenied, into: "open", onPathsContaining: path, times: 1)
            #expect(throws: InputFile.Failure(path: path, reason: "Permission denied")) { try InputFile.bytes(path) }
            #expect(try InputFile.bytes(path) == Array("{}".utf8))
        }
    }
    #endif

    @Test("InputFile reads a file, a FIFO and its text; refuses a directory, a missing file and a regular file over the limit by size, in the system's words")
    func inputFile() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/config.toml"
            try FileSystem.atomicWrite(Array("\u{FEFF}a = 1\n".utf8), to: path)
            #expect(try InputFile.text(path) == "a = 1\n", "a byte order mark is dropped")
            #expect(throws: InputFile.Failure(path: root, reason: "Is a directory")) { try InputFile.bytes(root) }
            #expect(throws: InputFile.Failure(path: "\(root)/absent", reason: "No such file or directory")) { try InputFile.bytes("\(root)/absent") }
            #expect(throws: InputFile.Failure(path: path, reason: "it is 9 bytes, over the limit of 8 bytes")) { try InputFile.bytes(path, limit: 8) }
            #expect(try InputFile.bytes(path, limit: 9).count == 9)
            try FileSystem.atomicWrite([0x61, 0xFF], to: path)
            #expect(throws: InputFile.Failure(path: path, reason: "not UTF-8 text")) { try InputFile.text(path) }
            let fifo = "\(root)/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let writer = Thread {
                let handle = open(fifo, O_WRONLY)
                _ = "0123456789".withCString { write(handle, $0, 10) }
                close(handle)
            }
            writer.start()
            #expect(throws: InputFile.Failure(path: fifo, reason: "it has more than 4 bytes, the limit")) { try InputFile.bytes(fifo, limit: 4) }
            #expect(InputFile.name("-") == "<stdin>" && InputFile.name(fifo) == fifo)
        }
    }
}
