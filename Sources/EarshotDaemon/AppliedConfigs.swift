import RoutingPolicy
import Synchronization

/// The configs the daemon applies: where the one in force came from, and who hears of each
/// one it takes (the driver host, the rolling recording), in order. Each listener has a stream
/// of its own holding at most the newest config not yet read.
struct AppliedConfigs: Sendable {
    var source: ConfigSource
    private var listeners = ListenerList<AsyncStream<PolicyConfig>.Continuation>(capacity: 8)

    init(source: ConfigSource) {
        self.source = source
    }

    /// A new listener's stream, starting with `current`; it ends at once past the capacity.
    mutating func listen(current: PolicyConfig) -> AsyncStream<PolicyConfig> {
        let (stream, continuation) = AsyncStream.makeStream(of: PolicyConfig.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(current)
        if listeners.add(continuation) == nil { continuation.finish() }
        return stream
    }

    func applied(_ config: PolicyConfig) {
        for listener in listeners.listeners { listener.yield(config) }
    }

    /// Ends every stream; a listener that comes later is still added (and told nothing more).
    mutating func end() {
        for listener in listeners.removeAll() { listener.finish() }
    }
}

/// An explicit `--config` read once at start (a pipe, standard input): a reload keeps its
/// config, and says so once.
final class ConfigReadOnce: Sendable {
    /// What it was read from.
    let origin: String
    let noticed = Atomic<Bool>(false)

    init(origin: String) {
        self.origin = origin
    }
}
