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
/// under a lock (no fsync): a caller waits at most for one line to reach the page cache. A
/// failure (open, write, rotation: a full disk) is reported once through `problem`; lines are
/// then dropped and writing is tried again after a minute, then after twice as long each time it
/// fails again (at most an hour), the wait counted on `clock`. Writing again is reported through
/// `resumed`, with how many lines were dropped. It never throws and never crashes its caller.
public final class DriverPacketLog: Sendable {
    /// The default cap per file.
    public static let defaultCap = 16 << 20

    /// The first wait before writing is tried again after a failure, and the longest (ms).
    static let firstRetry: Int64 = 60_000
    static let longestRetry: Int64 = 3_600_000

    public let path: String
    public let cap: Int
    private let problem: @Sendable (String) -> Void
    private let resumed: @Sendable (String) -> Void
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var file: AppendingFile?
        /// While failing: when writing is tried again, and when it failed (ms on `clock`; a
        /// clock set back before the failure makes the retry due at once).
        var retryAt: Int64?
        var failedAt: Int64 = 0
        var nextWait = DriverPacketLog.firstRetry
        var dropped = 0
        var closed = false
    }

    /// - Parameters:
    ///   - cap: bytes per file before it is rotated (at least one line is always written).
    ///   - problem: told, once per failure, why lines are being dropped.
    ///   - resumed: told when a line is written again after a failure.
    ///   - clock: milliseconds since the Unix epoch for each line and for the retry waits (wall
    ///     clock by default).
    public init(
        path: String, cap: Int = DriverPacketLog.defaultCap, problem: @escaping @Sendable (String) -> Void,
        resumed: @escaping @Sendable (String) -> Void = { _ in },
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) {
        self.path = path
        self.cap = max(1, cap)
        self.problem = problem
        self.resumed = resumed
        self.clock = clock
    }

    /// Logs `bytes` exchanged with `device` now.
    public func record(_ direction: PacketLogLine.Direction, _ bytes: [UInt8], device: PacketLogLine.Device) {
        record(PacketLogLine(device: device, time: clock(), direction: direction, bytes: bytes))
    }

    /// Logs one line as given (its time, if any, is the caller's).
    public func record(_ line: PacketLogLine) {
        let bytes = Array((line.rendered + "\n").utf8)
        let now = clock()
        enum Said { case nothing, failed(String), resumed(String) }
        let said: Said = state.withLock { state in
            guard !state.closed else { return .nothing }
            if let retryAt = state.retryAt, now < retryAt, now >= state.failedAt {
                state.dropped += 1
                return .nothing
            }
            // The write that failed may have left part of its line: the first line after a
            // failure starts on a line of its own (decode skips the blank line this may leave).
            let bytes = state.retryAt == nil ? bytes : [UInt8(ascii: "\n")] + bytes
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
                guard state.retryAt != nil else { return .nothing }
                let dropped = state.dropped
                (state.retryAt, state.nextWait, state.dropped) = (nil, Self.firstRetry, 0)
                return .resumed("packet log \(path): writing again (\(dropped) line(s) dropped)")
            } catch {
                if let file = state.file { try? file.close() }
                state.file = nil
                state.dropped += 1
                let first = state.retryAt == nil
                state.failedAt = now
                state.retryAt = now + state.nextWait
                state.nextWait = min(state.nextWait * 2, Self.longestRetry)
                return first ? .failed("packet log \(path): \(error); lines are dropped and writing is tried again in a minute (then less often, at most hourly)") : .nothing
            }
        }
        switch said {
        case .nothing: break
        case .failed(let text): problem(text)
        case .resumed(let text): resumed(text)
        }
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
