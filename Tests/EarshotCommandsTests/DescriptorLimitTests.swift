import AudioGraph
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28: with its descriptor limit at 64 (a systemd LimitNOFILE, a container), 32
/// connections filled the daemon's table and 0.7 s later libdispatch's worker-pool monitor,
/// unable to open /proc/<tid>/stat, aborted it (SIGILL, exit 132), every time. Connections are
/// now kept under the limit minus a reserve: past it the oldest idle one makes room, or the new
/// one is refused with the reason.
@Suite("Descriptor limit", .serialized, .timeLimit(.minutes(4)), .blockingCalls)
struct DescriptorLimitTests {
    typealias D = DaemonFixture

    @Test("nofile 64: 150 clients pipelining status never kill the daemon; each is answered, the oldest idle ones closed to make room (or a newcomer refused with the reason), it still routes and answers, and takes new clients again")
    func fullTable() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            guard let binary = EarshotBinary.url?.path else { throw FixtureError("earshot binary not built") }
            let daemon = try sandbox.spawn("earshot-daemon", ["prlimit", "--nofile=64:64", binary, "daemon", "--verbose"])
            let socket = sandbox.runtimeDir.appendingPathComponent("earshot/control").path
            try await offPool { try sandbox.waitForFile(socket, createdBy: daemon) }
            try await DaemonSession(path: socket).register(D.address, placement: "off-head")

            // Wave after wave of clients that pipeline requests, all left open. Each one hears
            // back, never waits for ever: its answers (it may be closed afterwards, once idle,
            // to make room), a refusal that says why, or — closed to make room before it spoke
            // — the end.
            var clients: [RawControlSocket] = []
            var answered = 0, refused = 0, closedFirst = 0
            for wave in 0..<3 {
                var waveClients: [RawControlSocket?] = []
                for _ in 0..<50 {
                    let client = try RawControlSocket(path: socket)
                    do {
                        try await client.send(String(repeating: #"{"op":"status"}"# + "\n", count: 5))
                        waveClients.append(client)
                    } catch {
                        closedFirst += 1  // closed (idle) before its requests went out
                        waveClients.append(nil)
                    }
                }
                for client in waveClients.compactMap({ $0 }) {
                    guard let line = try await client.readLine(timeout: .seconds(120)) else {
                        closedFirst += 1
                        continue
                    }
                    let reply = try JSONValue.parse(line)
                    if reply["ok"] == .bool(true) {
                        answered += 1
                    } else {
                        #expect(reply["error"]?["message"]?.propertyText?.contains("short of file descriptors") == true, "\(line)")
                        refused += 1
                    }
                    clients.append(client)
                }
                #expect(!daemon.hasExited, "wave \(wave): the daemon died (status \(daemon.exitStatus.map(String.init) ?? "?"))\n\(daemon.logTail())")
            }
            // The first clients were closed to make room: their answers, then the end.
            for client in clients.prefix(10) {
                while try await client.readLine(timeout: .seconds(120)) != nil {}
            }
            // The table never filled: what kills the daemon (libdispatch cannot open /proc then)
            // never came near. (A loaded run filled it when the shedding went by the descriptor's
            // number alone: a low number handed out again hid the descriptors above it.)
            #expect(!daemon.logTail(lines: 400).contains("Too many open files"), "\(daemon.logTail(lines: 40))")
            print("descriptor limit 64: \(answered) clients answered, \(refused) refused with the reason, \(closedFirst) closed to make room before they spoke")
            #expect(answered + refused + closedFirst == 150)
            #expect(answered >= 50)

            // Still routing: the headphones go on, the output follows; status answers. (The
            // session that registered was idle, so it went to make room too.)
            let session = try DaemonSession(path: socket)
            try await session.register(D.address, placement: "on-head")
            _ = try await sandbox.observer.waitUntil("the headphones after the flood", timeout: .seconds(30)) { $0.isDefault(D.headphones) }
            #expect(try await session.decidedDefault() == D.headphones)
            try await daemon.waitForLog(containing: "descriptors open, near the limit", timeout: .seconds(10))

            // Once they close, new clients are taken again.
            clients.removeAll()
            for index in 0..<20 {
                let client = try RawControlSocket(path: socket)
                #expect(try await client.request(#"{"id":\#(index),"op":"status"}"#, timeout: .seconds(120))["ok"] == .bool(true))
            }
            #expect(!daemon.hasExited)
            daemon.stop()
            #expect(daemon.exitStatus == 0, "\(daemon.logTail())")
        }
    }
}
