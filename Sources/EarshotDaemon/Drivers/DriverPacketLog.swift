import AccessoryDrivers
import FoundationEssentials
import Synchronization
import SystemBridge

/// Appends the bytes the built-in drivers exchange with headsets to a file, one
/// `PacketLogLine` per packet or read (docs/drivers.md, "Packet logs"), for
/// `earshot driver decode` to read back.
///
/// The file is opened 0600 (created or appended to) through SystemBridge. It is bounded: a line
/// that would take it past `cap` first moves it to `FILE.1` (replacing an older one) and starts
/// a new file, so the log never holds more than about twice the cap. Writes are plain `write`s
/// under a lock (no fsync): a caller waits at most for one line to reach the page cache. The
/// first failure (open, write, rotation) is reported once through `problem` and the log then
/// drops every line; it never throws and never crashes its caller.
public final class DriverPacketLog: Sendable {
    /// The default cap per file.
    public static let defaultCap = 16 << 20

    public let path: String
    public let cap: Int
    private let problem: @Sendable (String) -> Void
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var file: AppendingFile?
        var failed = false
        var closed = false
    }

    /// - Parameters:
    ///   - cap: bytes per file before it is rotated (at least one line is always written).
    ///   - problem: told, once, why the log stopped.
    ///   - clock: milliseconds since the Unix epoch for each line (wall clock by default).
    public init(
        path: String, cap: Int = DriverPacketLog.defaultCap, problem: @escaping @Sendable (String) -> Void,
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) {
        self.path = path
        self.cap = max(1, cap)
        self.problem = problem
        self.clock = clock
    }

    /// Logs `bytes` exchanged with `device` now.
    public func record(_ direction: PacketLogLine.Direction, _ bytes: [UInt8], device: PacketLogLine.Device) {
        record(PacketLogLine(device: device, time: clock(), direction: direction, bytes: bytes))
    }

    /// Logs one line as given (its time, if any, is the caller's).
    public func record(_ line: PacketLogLine) {
        let bytes = Array((line.rendered + "\n").utf8)
        let failure: String? = state.withLock { state in
            guard !state.failed, !state.closed else { return nil }
            do throws(SystemError) {
                var file: AppendingFile
                if let open = state.file {
                    file = open
                } else {
                    file = try FileSystem.openForAppending(path)
                }
                state.file = nil
                if file.size > 0, file.size + bytes.count > cap {
                    try? file.close()
                    try FileSystem.rename(path, to: path + ".1")
                    file = try FileSystem.openForAppending(path)
                }
                state.file = file
                try file.write(bytes)
                state.file = file
                return nil
            } catch {
                if let file = state.file { try? file.close() }
                state.file = nil
                state.failed = true
                return "packet log \(path): \(error); no more packets are logged"
            }
        }
        if let failure { problem(failure) }
    }

    /// Closes the file; later lines are dropped.
    public func close() {
        state.withLock { state in
            if let file = state.file { try? file.close() }
            state.file = nil
            state.closed = true
        }
    }

    deinit { close() }
}
