import CEarshotLinux
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A Unix signal the daemon reacts to.
public struct Signal: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// SIGHUP: reload the configuration.
    public static var hangUp: Signal { Signal(rawValue: SIGHUP) }
    /// SIGTERM: stop (systemd, kill).
    public static var terminate: Signal { Signal(rawValue: SIGTERM) }
    /// SIGINT: stop (Ctrl-C).
    public static var interrupt: Signal { Signal(rawValue: SIGINT) }

    public var description: String {
        switch rawValue {
        case SIGHUP: "SIGHUP"
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        default: "signal \(rawValue)"
        }
    }

    /// Sends this signal to the current process, as `kill` from outside would (for tests).
    public func send() { _ = kill(getpid(), rawValue) }
}

/// Calls `handler` on a thread of its own when one of `signals` arrives, instead of the
/// signal's default action (which for these three ends the process). A C handler writes the
/// signal's number to a pipe whichever thread the kernel interrupts (the self-pipe trick), and
/// a `PollThread` reads it: no Dispatch source, whose delivery on Linux depends on which
/// thread had the signal blocked. One watcher per signal at a time: a newer one takes it over.
/// After `stop()` the signals are ignored: a late SIGTERM during shutdown does not cut it short.
public final class SignalWatcher: Sendable {
    private let signals: [Signal]
    private let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor
    private let thread: PollThread
    private let stopped = Mutex(false)

    public init(_ signals: [Signal], threadName: String = "earshot-signals", handler: @escaping @Sendable (Signal) -> Void) throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        try retryingOnInterrupt("pipe2") { CEarshotLinux_pipe(&ends) }
        let readEnd = FileDescriptor(rawValue: ends[0])
        let writeEnd = FileDescriptor(rawValue: ends[1])
        do throws(SystemError) {
            thread = try PollThread(watching: readEnd.rawValue, name: threadName) {
                var numbers = [UInt8](repeating: 0, count: 64)
                let count = numbers.withUnsafeMutableBytes { read(readEnd.rawValue, $0.baseAddress, $0.count) }
                for number in numbers.prefix(max(0, count)) { handler(Signal(rawValue: Int32(number))) }
            }
            for signal in signals {
                try retryingOnInterrupt("sigaction", detail: signal.description) {
                    CEarshotLinux_forward_signal(signal.rawValue, writeEnd.rawValue)
                }
            }
        } catch {
            for signal in signals { _ = CEarshotLinux_forward_signal(signal.rawValue, -1) }
            _ = try? readEnd.close()
            _ = try? writeEnd.close()
            throw error
        }
        self.signals = signals
        self.readEnd = readEnd
        self.writeEnd = writeEnd
    }

    deinit { stop() }

    /// Sets the signals to ignored, waits until the reader thread has ended (a handler already
    /// running finishes first), then closes the pipe. Safe to call twice; never from `handler`.
    public func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        for signal in signals { _ = CEarshotLinux_forward_signal(signal.rawValue, -1) }
        thread.stop()
        _ = try? readEnd.close()
        _ = try? writeEnd.close()
    }
}
