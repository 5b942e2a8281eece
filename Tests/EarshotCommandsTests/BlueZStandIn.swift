import Foundation
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// scripts/testing/bluez-standin on the sandbox's private system bus: an org.bluez with the
/// adapters a test gives it, driven through its stdin ("add hci1 ADDRESS", "remove hci1", …).
final class BlueZStandIn {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/testing/bluez-standin").path

    let process: ChildProcess
    private var writeEnd: Int32

    /// Starts it with `adapters` (name → address); it owns org.bluez soon after, not at once.
    init(sandbox: PipeWireSandbox, adapters: KeyValuePairs<String, String>) throws {
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { Glibc.close(readEnd) }
        self.writeEnd = writeEnd
        do {
            // /usr/bin/python3: the Debian interpreter that has python3-dbus and python3-gi.
            process = try sandbox.spawn(
                "bluez-standin", ["/usr/bin/python3", Self.script] + adapters.flatMap { ["--adapter", "\($0.key)=\($0.value)"] },
                stdinFD: readEnd)
        } catch {
            Glibc.close(writeEnd)
            throw error
        }
    }

    deinit { stop() }

    func send(_ command: String) throws {
        let bytes = Array((command + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw FixtureError("writing to bluez-standin's stdin: \(String(cString: strerror(errno)))\n\(process.logTail())")
            }
            offset += written
        }
    }

    /// BlueZ vanishes: the process is stopped by PID and its name leaves the bus.
    func stop() {
        if writeEnd >= 0 {
            Glibc.close(writeEnd)
            writeEnd = -1
        }
        process.stop()
    }
}
