@testable import ControlProtocol
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
import SystemBridge
#endif

/// Starting where a socket file already is: a live daemon, a dead one's leftover, something else.
@Suite("control socket file", .timeLimit(.minutes(1)), .blockingCalls)
struct ControlSocketFileTests {
    @Test("a second server on the path of a live one refuses to start, saying so; the first keeps serving")
    func liveDaemonRefused() async throws {
        try await ControlFixture.with { fixture in
            do {
                let second = try await ControlServer.start(path: fixture.socketPath, control: InMemoryDaemonControl())
                await second.close()
                Issue.record("a second server started on \(fixture.socketPath)")
            } catch {
                #expect("\(error)".contains("another earshot daemon is listening on \(fixture.socketPath)"))
            }
            let client = try RawControlSocket(path: fixture.socketPath)
            #expect(try await client.request(#"{"op":"status"}"#)["ok"] == .bool(true))
        }
    }

    @Test("a stale socket file (nobody listening) is replaced; close removes the socket")
    func staleSocketReplaced() async throws {
        let root = try Self.temporaryRuntimeDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("earshot/control").path
        try FileManager.default.createDirectory(atPath: root.appendingPathComponent("earshot").path, withIntermediateDirectories: true)
        try bindWithoutListening(path)
        let server = try await ControlServer.start(path: path, control: InMemoryDaemonControl())
        // A new socket in place of the stale one, 0600, and no temporary left beside it.
        let fresh = try #require(try FileSystem.entry(at: path))
        #expect(fresh.kind == .socket)
        #expect(fresh.permissions == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent) == ["control"])
        let client = try RawControlSocket(path: path)
        #expect(try await client.request(#"{"op":"list"}"#)["ok"] == .bool(true))
        await server.close()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a path that is not a socket is left alone and named in the error")
    func notASocket() async throws {
        let root = try Self.temporaryRuntimeDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("control").path
        try "keep me".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            let server = try await ControlServer.start(path: path, control: InMemoryDaemonControl())
            await server.close()
            Issue.record("started over a regular file")
        } catch {
            #expect("\(error)".contains("is not a socket"))
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
    }

    @Test("the default path is $XDG_RUNTIME_DIR/earshot/control")
    func defaultPath() {
        #expect(ControlSocketPath.default(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/earshot/control")
        #expect(ControlSocketPath.default(environment: [:]) == "/run/user/\(getuid())/earshot/control")
    }

    static func temporaryRuntimeDirectory() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-socket-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return root
    }

    /// What a daemon killed with SIGKILL leaves: a bound socket file with no listener.
    private func bindWithoutListening(_ path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw SystemError("bind", path: path, code: errno) }
    }
}

/// Issue 28: a control socket file deleted while the daemon ran was never made again (every
/// client exit 3 until a restart).
@Suite("control socket file deleted", .timeLimit(.minutes(2)), .blockingCalls)
struct ControlSocketFileDeletedTests {
    @Test("deleted while the server runs, the socket file is made again (0600) and answers; so is its directory; connected clients go on; close removes it")
    func madeAgain() async throws {
        try await ControlFixture.with { fixture in
            let path = fixture.socketPath
            let connected = try RawControlSocket(path: path)
            #expect(try await connected.request(#"{"id":1,"op":"status"}"#)["ok"] == .bool(true))
            for round in 0..<3 {
                #expect(unlink(path) == 0)
                #expect(await FileWait.appears(path, within: .seconds(60)), "round \(round): not made again")
                let client = try RawControlSocket(path: path)
                #expect(try await client.request(#"{"id":2,"op":"status"}"#)["ok"] == .bool(true))
                let entry = try #require(try FileSystem.entry(at: path))
                #expect(entry.kind == .socket)
                #expect(entry.permissions == 0o600)
            }
            // The whole directory gone (a cleaner of the runtime directory).
            let directory = (path as NSString).deletingLastPathComponent
            // Moved away, then deleted (an rm -rf races the daemon making the file again in it).
            #expect(rename(directory, directory + ".gone") == 0)
            try FileManager.default.removeItem(atPath: directory + ".gone")
            #expect(await FileWait.appears(path, within: .seconds(60)), "not made again with its directory")
            let client = try RawControlSocket(path: path)
            #expect(try await client.request(#"{"id":3,"op":"status"}"#)["ok"] == .bool(true))
            #expect(try await connected.request(#"{"id":4,"op":"status"}"#)["ok"] == .bool(true), "a client connected before the deletions lost its connection")
            await fixture.server.close()
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("a deletion racing the close leaves no socket file behind (100 rounds; the file made again for nothing goes too)")
    func deletionRacingClose() async throws {
        for _ in 0..<100 {
            let root = try ControlSocketFileTests.temporaryRuntimeDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let path = root.appendingPathComponent("earshot/control").path
            let server = try await ControlServer.start(path: path, control: InMemoryDaemonControl())
            async let deleted: Int32 = offPool { unlink(path) }
            await server.close()
            _ = try await deleted
            // close() has stopped the watch (its thread joined): nothing makes the file later.
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
