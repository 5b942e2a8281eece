import ControlProtocol
import Dispatch
import FoundationEssentials
import RoutingPolicy
import Synchronization
import SystemBridge
import SystemPackage

/// The open connections, so close can end them; none are admitted once closing began.
final class ControlConnectionRegistry: Sendable {
    struct Connection {
        var connection: ControlConnection
        var session: ControlSession?
        /// When it was admitted, on `ControlActivity`'s count.
        var opened: UInt64 = 0

        /// Since when it has been idle: its last answered request, else its admission.
        var idleSince: UInt64 { max(opened, session?.lastActivity ?? 0) }
    }

    private struct State {
        var connections: [ObjectIdentifier: Connection] = [:]
        var closing = false
        var saidCapped = false
        /// The most connections open at once since the allocator last gave memory back.
        var peak = 0
        /// Connections closed since then, and the fewest open meanwhile (the long-lived ones:
        /// a status bar's subscription, a `watch`).
        var closedSinceTrim = 0
        var lowSinceTrim = Int.max
    }

    /// A burst this large that has mostly left (to a quarter) gives the allocator's free
    /// memory back to the system: a daemon returns to its baseline after many clients.
    static let burstWorthTrimming = 64
    /// So do this many clients come and gone one after another (a status bar's `earshot
    /// status`, a script's loop: never many at once, yet 3000 of them left the heap in pieces,
    /// issue 28), once few are left open.
    static let departuresWorthTrimming = 256

    /// Told (off the control queue) each time the allocator gave memory back, with how many
    /// connections had closed since the time before: the daemon's debug log.
    private let trimmed: @Sendable (Int) -> Void

    private let state = Mutex(State())
    private let maximum: Int

    init(maximum: Int, trimmed: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.maximum = max(1, maximum)
        self.trimmed = trimmed
    }

    /// Admits `connection`; at the cap (or with descriptors short) the oldest idle connection
    /// is closed to make room (said once, on stderr as the daemon's log), or, with none idle,
    /// `connection` is refused.
    func add(_ connection: ControlConnection, descriptorsShort: Bool = false) -> Bool {
        let (admitted, evicted, say) = state.withLock { state -> (Bool, ControlConnection?, String?) in
            guard !state.closing else { return (false, nil, nil) }
            var evicted: ControlConnection?
            var say: String?
            if state.connections.count >= maximum || descriptorsShort {
                if descriptorsShort {
                    guard let idle = Self.removeOldestIdle(from: &state) else { return (false, nil, nil) }
                    state.connections[ObjectIdentifier(connection)] = Connection(connection: connection, opened: ControlActivity.next())
                    return (true, idle, nil)
                }
                guard let idle = Self.removeOldestIdle(from: &state) else {
                    if !state.saidCapped { say = "control socket: \(maximum) connections open and none idle: refusing new ones until some close" }
                    state.saidCapped = true
                    return (false, nil, say)
                }
                evicted = idle
                if !state.saidCapped { say = "control socket: \(maximum) connections open: closing the oldest idle ones to make room (said once)" }
                state.saidCapped = true
            }
            state.connections[ObjectIdentifier(connection)] = Connection(connection: connection, opened: ControlActivity.next())
            state.peak = max(state.peak, state.connections.count)
            return (true, evicted, say)
        }
        evicted?.close()
        if let say { ControlConnectionRegistry.warn(say) }
        return admitted
    }

    /// Takes the connection idle the longest out of the registry (for its caller to close):
    /// descriptors ran out, and it makes room.
    func closeOldestIdle() -> ControlConnection? {
        state.withLock { state in
            guard !state.closing else { return nil }
            return Self.removeOldestIdle(from: &state)
        }
    }

    /// Idle the longest: the last request answered (or the admission, for one that never asked
    /// anything) longest ago. One that was answered goes before one that has not spoken yet: in
    /// a burst of one-shot clients that is one whose request is still on its way (issue 28: at
    /// the cap, 600 `earshot status` at once lost some that had just connected).
    private static func removeOldestIdle(from state: inout State) -> ControlConnection? {
        let idle = state.connections.filter { $0.value.session?.isIdle == true }.min { first, second in
            let (a, b) = (first.value, second.value)
            let (aSpoke, bSpoke) = ((a.session?.lastActivity ?? 0) > 0, (b.session?.lastActivity ?? 0) > 0)
            return aSpoke != bSpoke ? aSpoke : a.idleSince < b.idleSince
        }
        guard let idle else { return nil }
        state.connections.removeValue(forKey: idle.key)
        state.closedSinceTrim += 1
        return idle.value.connection
    }

    /// The daemon's log is its stderr (swift-log's stream handler).
    static func warn(_ line: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array("earshot: \(line)\n".utf8))
    }

    /// The session of an admitted connection, so close can wait for its requests.
    func attach(_ session: ControlSession, to connection: ControlConnection) {
        state.withLock { $0.connections[ObjectIdentifier(connection)]?.session = session }
    }

    func remove(_ connection: ControlConnection) {
        let trim = state.withLock { state -> Int? in
            guard state.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return nil }
            state.closedSinceTrim += 1
            let open = state.connections.count
            let burstLeft = state.peak >= Self.burstWorthTrimming && open <= state.peak / 4
            state.lowSinceTrim = min(state.lowSinceTrim, open)
            // Few open beyond those that stay: long-lived connections must not keep it from
            // happening (with five, it never did).
            let manyLeft = state.closedSinceTrim >= Self.departuresWorthTrimming && open <= state.lowSinceTrim + 4
            guard burstLeft || manyLeft else { return nil }
            defer {
                state.peak = open
                state.closedSinceTrim = 0
                state.lowSinceTrim = open
            }
            return state.closedSinceTrim
        }
        // Off the control queue: trimming a large heap takes milliseconds.
        if let trim {
            let trimmed = trimmed
            Task.detached(priority: .background) {
                CurrentProcess.returnFreedMemory()
                trimmed(trim)
            }
        }
    }

    func closeAll() -> [Connection] {
        state.withLock { state in
            state.closing = true
            return Array(state.connections.values)
        }
    }

    var count: Int { state.withLock { $0.connections.count } }
}
