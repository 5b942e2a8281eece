import Foundation
import SystemBridge
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reading a file that must be regular, never blocking (issue 21, item 1), and reading a stream
/// with a limit; the user database's home directory (item 4).
@Suite("Reading door", .timeLimit(.minutes(1)), .blockingCalls)
struct ReadingDoorTests {
    @Test("readRegularFile reads a regular file, through a symbolic link too")
    func readsARegularFile() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/earshot.toml"
            try FileSystem.atomicWrite(Array("a = 1\n".utf8), to: path)
            #expect(try FileSystem.readRegularFile(path, limit: 100) == Array("a = 1\n".utf8))
            try FileManager.default.createSymbolicLink(atPath: "\(root)/link.toml", withDestinationPath: path)
            #expect(try FileSystem.readRegularFile("\(root)/link.toml", limit: 100) == Array("a = 1\n".utf8))
            // Exactly the limit is fine; one byte more is not.
            #expect(try FileSystem.readRegularFile(path, limit: 6).count == 6)
            #expect(throws: FileSystem.ReadError.tooLarge(path: path, size: 6, limit: 5)) { try FileSystem.readRegularFile(path, limit: 5) }
        }
    }

    @Test("a FIFO nobody writes to is refused at once, unopened: the caller is never blocked")
    func refusesAFIFO() throws {
        try withTemporaryDirectory { root in
            let fifo = "\(root)/earshot.toml"
            #expect(mkfifo(fifo, 0o600) == 0)
            #if DEBUG
            // Never opened (an open would block on a FIFO): by order, not a bound in seconds.
            let opening = FaultInjection.inject(.ioError, into: "open", onPathsContaining: fifo)
            defer { FaultInjection.remove(opening) }
            #endif
            #expect(throws: FileSystem.ReadError.notRegular(path: fifo, type: .fifo)) { try FileSystem.readRegularFile(fifo, limit: 1 << 20) }
            #if DEBUG
            #expect(FaultInjection.uses(of: opening) == 0, "the FIFO was opened")
            #endif
            let error = FileSystem.ReadError.notRegular(path: fifo, type: .fifo)
            #expect(error.reason == "it is a FIFO (named pipe), not a regular file")
        }
    }

    @Test("a device, a directory, a missing file, a dangling and a looping link are refused with the system's words")
    func refusesTheRest() throws {
        try withTemporaryDirectory { root in
            #expect(throws: FileSystem.ReadError.notRegular(path: "/dev/zero", type: .characterDevice)) {
                try FileSystem.readRegularFile("/dev/zero", limit: 16)
            }
            do throws(FileSystem.ReadError) {
                _ = try FileSystem.readRegularFile(root, limit: 16)
                Issue.record("read a directory")
            } catch {
                #expect(error.reason == "Is a directory")
            }
            try FileManager.default.createSymbolicLink(atPath: "\(root)/dangling", withDestinationPath: "\(root)/moved-away")
            try FileManager.default.createSymbolicLink(atPath: "\(root)/loop", withDestinationPath: "\(root)/loop")
            for (path, reason) in [("\(root)/absent", "No such file or directory"), ("\(root)/dangling", "No such file or directory"),
                                   ("\(root)/loop", "Too many levels of symbolic links")] {
                do throws(FileSystem.ReadError) {
                    _ = try FileSystem.readRegularFile(path, limit: 16)
                    Issue.record("read \(path)")
                } catch {
                    #expect(error.reason == reason, "\(path)")
                    #expect(error.path == path)
                }
            }
        }
    }

    @Test("a 1 GiB file is refused by its size, never opened")
    func refusesAHugeFile() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/huge.toml"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, 1 << 30) == 0)  // sparse: no disk used
            #if DEBUG
            // Never opened, so never read: by order, not a bound in seconds (issue 28).
            let opening = FaultInjection.inject(.ioError, into: "open", onPathsContaining: path)
            defer { FaultInjection.remove(opening) }
            #endif
            do throws(FileSystem.ReadError) {
                _ = try FileSystem.readRegularFile(path, limit: 16 << 20)
                Issue.record("read 1 GiB")
            } catch {
                #expect(error == .tooLarge(path: path, size: 1 << 30, limit: 16 << 20))
                #expect(error.reason == "it is 1073741824 bytes, over the limit of 16777216")
            }
            #if DEBUG
            #expect(FaultInjection.uses(of: opening) == 0, "the file was opened")
            #endif
        }
    }

    @Test("readStream reads a FIFO once its writer has written and closed; more than the limit is refused")
    func readsAStream() throws {
        try withTemporaryDirectory { root in
            let fifo = "\(root)/config.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let writer = Thread {
                let fd = open(fifo, O_WRONLY)  // blocks until the reader opens
                _ = "a = 1\n".withCString { write(fd, $0, 6) }
                close(fd)
            }
            writer.start()
            let bytes = try FileSystem.readStream(fifo, limit: 100)
            #expect(bytes == Array("a = 1\n".utf8))
            #expect(throws: FileSystem.ReadError.tooLarge(path: "/dev/zero", size: nil, limit: 1000)) {
                try FileSystem.readStream("/dev/zero", limit: 1000)
            }
        }
    }

    @Test("the user database's home directory is getent's, not $HOME; a uid without an entry has none")
    func passwdHome() throws {
        let uid = CurrentProcess.userID
        let getent = Process()
        getent.executableURL = URL(fileURLWithPath: "/usr/bin/getent")
        getent.arguments = ["passwd", String(uid)]
        let output = Pipe()
        getent.standardOutput = output
        try getent.run()
        getent.waitUntilExit()
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let fields = line.split(separator: ":", omittingEmptySubsequences: false)
        #expect(fields.count >= 7)
        #expect(try CurrentProcess.passwdHomeDirectory() == String(fields[5]))
        // Far above any real account.
        #expect(try CurrentProcess.homeDirectory(of: 3_999_999_999) == nil)
    }
}
