import Foundation
import SystemBridge
import Synchronization
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system's temporary directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-door-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(atPath: root) }
    return try body(root)
}

/// Binds a Unix socket at `path` without listening: what a daemon killed with SIGKILL leaves.
/// Returns the descriptor (listening on it if `listen`); the caller closes it.
func bindUnixSocket(_ path: String, listen: Bool = false) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else { throw SystemError("bind", path: path, code: errno) }
    if listen { Glibc.listen(fd, 4) }
    return fd
}

@Suite("FileSystem door", .blockingCalls)
struct FileSystemDoorTests {
    @Test("atomicWrite creates the file with the given mode and leaves no temporary behind")
    func createsWithMode() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/state.json"
            try FileSystem.atomicWrite(Array("first".utf8), to: path, permissions: 0o600)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "first")
            let entry = try #require(try FileSystem.entry(at: path))
            #expect(entry.kind == .regular)
            #expect(entry.permissions == 0o600)
            try FileSystem.atomicWrite(Array("second".utf8), to: path)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "second")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["state.json"])
        }
    }

    @Test("a reader racing the writer sees the old file or the new one, never a mix or nothing")
    func readersSeeOldOrNew() async throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/state.json"
            // Large enough that a plain rewrite in place would be seen half done.
            let versions = [[UInt8](repeating: UInt8(ascii: "a"), count: 200_000), [UInt8](repeating: UInt8(ascii: "b"), count: 70_000)]
            try FileSystem.atomicWrite(versions[0], to: path)
            let done = Atomic<Bool>(false)
            let bad = Mutex<[String]>([])
            let reads = Atomic<Int>(0)
            let reader = Thread {
                while !done.load(ordering: .relaxed) {
                    guard let data = FileManager.default.contents(atPath: path) else {
                        bad.withLock { $0.append("missing") }
                        continue
                    }
                    reads.add(1, ordering: .relaxed)
                    if !versions.contains(Array(data)) { bad.withLock { $0.append("\(data.count) bytes") } }
                }
            }
            reader.start()
            for round in 0..<60 { try FileSystem.atomicWrite(versions[round % 2], to: path) }
            done.store(true, ordering: .relaxed)
            Thread.sleep(forTimeInterval: 0.05)
            #expect(bad.withLock { $0 }.isEmpty)
            #expect(reads.load(ordering: .relaxed) > 0)
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == versions[1])
        }
    }

    @Test("a failed write leaves the old file, removes the temporary, and names the path and the errno")
    func failedWriteKeepsOld() throws {
        try withTemporaryDirectory { root in
            // A non-empty directory where the file should go: rename(2) refuses with EISDIR
            // (permissions would not do: the tests may run as root).
            let path = "\(root)/state.json"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("old".utf8).write(to: URL(fileURLWithPath: "\(path)/keep"))
            do throws(SystemError) {
                try FileSystem.atomicWrite(Array("new".utf8), to: path)
                Issue.record("wrote over a directory")
            } catch {
                #expect(error.call == "rename")
                #expect(error.path == path)
                #expect(error.errno == .isDirectory)
                #expect(error.description.contains(path))
                #expect(error.description.contains("EISDIR"))
                #expect(error.description.contains("Is a directory"))
            }
            #expect(try String(contentsOfFile: "\(path)/keep", encoding: .utf8) == "old")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["state.json"])
        }
    }

    @Test("a write into a missing directory fails at open, naming the file and ENOENT")
    func missingDirectory() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/absent/state.json"
            do throws(SystemError) {
                try FileSystem.atomicWrite(Array("x".utf8), to: path)
                Issue.record("wrote into a missing directory")
            } catch {
                #expect(error.call == "open")
                #expect(error.path?.hasPrefix(path) == true)
                #expect(error.errno == .noSuchFileOrDirectory)
                #expect(error.description.contains("ENOENT"))
            }
        }
    }

    @Test("entry tells sockets, files, directories and links apart without following links; nil when absent")
    func entryKinds() throws {
        try withTemporaryDirectory { root in
            #expect(try FileSystem.entry(at: "\(root)/absent") == nil)
            #expect(try FileSystem.entry(at: root)?.kind == .directory)
            let file = "\(root)/file"
            try FileSystem.atomicWrite(Array("x".utf8), to: file)
            #expect(try FileSystem.entry(at: file)?.kind == .regular)
            try FileManager.default.createSymbolicLink(atPath: "\(root)/link", withDestinationPath: file)
            #expect(try FileSystem.entry(at: "\(root)/link")?.kind == .symbolicLink)
            let socketPath = "\(root)/socket"
            let fd = try bindUnixSocket(socketPath)
            defer { close(fd) }
            let socketEntry = try #require(try FileSystem.entry(at: socketPath))
            #expect(socketEntry.kind == .socket)
            #expect(socketEntry.identity != (try FileSystem.entry(at: file))?.identity)
        }
    }

    @Test("setPermissions, rename and remove act on the path and say what they could not do")
    func permissionsRenameRemove() throws {
        try withTemporaryDirectory { root in
            let socketPath = "\(root)/socket.tmp"
            let fd = try bindUnixSocket(socketPath)
            defer { close(fd) }
            try FileSystem.setPermissions(0o600, of: socketPath)
            #expect(try FileSystem.entry(at: socketPath)?.permissions == 0o600)
            let identity = try FileSystem.entry(at: socketPath)?.identity
            try FileSystem.rename(socketPath, to: "\(root)/socket")
            #expect(try FileSystem.entry(at: "\(root)/socket")?.identity == identity)
            #expect(try FileSystem.remove("\(root)/socket"))
            #expect(try !FileSystem.remove("\(root)/socket"))
            do throws(SystemError) {
                try FileSystem.setPermissions(0o600, of: "\(root)/socket")
                Issue.record("chmod of a missing file succeeded")
            } catch {
                #expect(error.description == "chmod \(root)/socket: No such file or directory (ENOENT)")
            }
        }
    }
}

@Suite("Unix socket door", .blockingCalls)
struct UnixSocketDoorTests {
    @Test("connect names the path and tells a missing file (ENOENT) from a stale socket (ECONNREFUSED)")
    func connectErrors() throws {
        try withTemporaryDirectory { root in
            do throws(SystemError) {
                _ = try UnixStreamSocket.connect(path: "\(root)/absent")
                Issue.record("connected to nothing")
            } catch {
                #expect(error.errno == .noSuchFileOrDirectory)
                #expect(error.description.contains("\(root)/absent"))
            }
            let stale = "\(root)/stale"
            let fd = try bindUnixSocket(stale)
            defer { close(fd) }
            do throws(SystemError) {
                _ = try UnixStreamSocket.connect(path: stale)
                Issue.record("connected to a socket nobody listens on")
            } catch {
                #expect(error.errno == .connectionRefused)
                #expect(error.description.contains("ECONNREFUSED"))
            }
        }
    }

    @Test("sendAll and receive carry bytes both ways; the peer closing reads as the end")
    func roundTrip() throws {
        try withTemporaryDirectory { root in
            let path = "\(root)/listening"
            let listener = try bindUnixSocket(path, listen: true)
            defer { close(listener) }
            let client = try UnixStreamSocket.connect(path: path)
            let server = accept(listener, nil, nil)
            #expect(server >= 0)
            let message = Array(repeating: Array("hello\n".utf8), count: 50_000).flatMap { $0 }  // more than a socket buffer
            let received = Mutex<[UInt8]>([])
            let reader = Thread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(server, &buffer, buffer.count)
                    guard count > 0 else { break }
                    received.withLock { $0.append(contentsOf: buffer[..<count]) }
                    if received.withLock({ $0.count }) == message.count {
                        _ = Glibc.write(server, "ok", 2)
                        close(server)
                        break
                    }
                }
            }
            reader.start()
            try client.sendAll(message)
            #expect(try !Readiness.wait([client.descriptor], timeout: .seconds(5)).isEmpty)
            var reply: [UInt8] = []
            while true {
                let chunk = try client.receive()
                if chunk.isEmpty { break }
                reply += chunk
            }
            #expect(reply == Array("ok".utf8))
            #expect(received.withLock { $0 } == message)
            #expect(try client.receiveAvailable() == [])
        }
    }

    @Test("Readiness.wait times out with nothing ready")
    func waitTimesOut() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach { close($0) } }
        let started = ContinuousClock.now
        #expect(try Readiness.wait([ends[0]], timeout: .milliseconds(50)).isEmpty)
        #expect(started.duration(to: .now) >= .milliseconds(50))
        _ = Glibc.write(ends[1], "x", 1)
        #expect(try Readiness.wait([ends[0]], timeout: .seconds(5)) == [ends[0]])
        #expect(try Readiness.read(ends[0]) == [UInt8(ascii: "x")])
    }

    @Test("peer credentials of a real socket pair are this process's pid, uid and gid")
    func peerCredentials() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach { close($0) } }
        let peer = try PeerCredentials.of(socket: ends[0])
        #expect(peer == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        #expect(peer.pid == CurrentProcess.id)
        #expect(peer.uid == CurrentProcess.userID)
        // The layout getsockopt fills: struct ucred, three 32-bit fields.
        #expect(MemoryLayout<PeerCredentials>.size == 12)
        // Not a socket: an error naming the call and the errno.
        let pipeEnds = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        defer { pipeEnds.deallocate() }
        #expect(pipe(pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        do throws(SystemError) {
            _ = try PeerCredentials.of(socket: pipeEnds[0])
            Issue.record("a pipe has peer credentials")
        } catch {
            #expect(error.description.contains("SO_PEERCRED"))
            #expect(error.description.contains("ENOTSOCK"))
        }
    }
}
