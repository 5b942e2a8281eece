import Foundation
import PipeWireTestSupport
import SystemBridge
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 item 4: a burst of clients costs bounded memory, and a second burst reuses what the
/// first one freed instead of growing the daemon (measured: the daemon's VmRSS, from /proc).
@Suite("Control memory", .serialized, .timeLimit(.minutes(3)))
struct ControlMemoryTests {
    typealias D = DaemonFixture
    static let clients = 3000

    static func residentKiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw FixtureError("no VmRSS in /proc/\(pid)/status") }
        return kib
    }

    /// `clients` connections at once, each sending one register and reading its reply; then
    /// all closed. Returns how many replies came.
    static func burst(_ path: String, tag: String) async throws -> Int {
        try await offPool {
            var descriptors: [Int32] = []
            defer { for fd in descriptors { close(fd) } }
            for _ in 0..<clients { descriptors.append(try UnixStreamSocket.connect(path: path).releaseDescriptor()) }
            for (index, fd) in descriptors.enumerated() {
                let line = #"{"op":"register","id":\#(index),"accessory":"node-\#(tag)-\#(index)","reporter":"org.example.r\#(tag)\#(index % 40)","capabilities":[]}"# + "\n"
                let sent = Array(line.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent == line.utf8.count else { throw FixtureError("send to client \(index) failed") }
            }
            var replies = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            for fd in descriptors {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 20_000) > 0 else { break }
                if read(fd, &buffer, buffer.count) > 0 { replies += 1 }
            }
            return replies
        }
    }

    @Test("3000 clients at once, twice: bounded growth, and the second burst reuses the first's memory")
    func burstOfClients() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: [.speakers()])) { sandbox in
            let daemon = try await D.startOffPool(in: sandbox)
            let pid = daemon.process.pid
            let before = try Self.residentKiB(pid)
            #expect(try await Self.burst(daemon.socketPath, tag: "a") == Self.clients)
            let afterFirst = try Self.residentKiB(pid)
            #expect(try await Self.burst(daemon.socketPath, tag: "b") == Self.clients)
            let afterSecond = try Self.residentKiB(pid)
            print("control memory: VmRSS \(before) KiB before, \(afterFirst) KiB after \(Self.clients) clients, \(afterSecond) KiB after \(Self.clients) more")
            #expect(afterFirst - before < 120 * 1024, "\(before) → \(afterFirst) KiB")
            #expect(afterSecond - afterFirst < 16 * 1024, "\(afterFirst) → \(afterSecond) KiB: the second burst grew the daemon")
            #expect(daemon.process.exitStatus == nil)
        }
    }
}
