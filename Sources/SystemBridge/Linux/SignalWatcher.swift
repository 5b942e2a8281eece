import Dispatch
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

    /// Sends this signal to the current process (for tests).
    public func raise() { _ = Glibc.raise(rawValue) }
}

/// Calls `handler` on a Dispatch queue when one of `signals` arrives, instead of the signal's
/// default action (which for these three ends the process). The signals stay ignored after
/// `stop()`: a late SIGTERM during shutdown does not cut it short.
public final class SignalWatcher: @unchecked Sendable {
    // Immutable after init; DispatchSource is thread-safe.
    private let sources: [any DispatchSourceSignal]

    public init(_ signals: [Signal], queue: DispatchQueue = .global(), handler: @escaping @Sendable (Signal) -> Void) {
        sources = signals.map { signal in
            // The default action must go, or the process dies before Dispatch sees the signal.
            Glibc.signal(signal.rawValue, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: queue)
            source.setEventHandler { handler(signal) }
            source.resume()
            return source
        }
    }

    deinit { stop() }

    /// Stops delivering: a signal that arrives later starts no handler (one already running
    /// finishes). Safe to call twice.
    public func stop() {
        for source in sources where !source.isCancelled { source.cancel() }
    }
}
