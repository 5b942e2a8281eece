import ControlProtocol
import Dispatch
import FoundationEssentials
import RoutingPolicy
import Synchronization
import SystemBridge
import SystemPackage

/// The open connections, so close can end them; none are admitted once closing began. Also
/// those closed whose sessions still run (settling), and when to give the allocator's free
/// memory back: once a connection has settled, not when it closes, since what a client left
/// queued is freed only then (issue 38).
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
        /// Closed (or closing: evicted) connections whose sessions still run: a request read
        /// before the close still being answered or saved.
        var settling: Set<ObjectIdentifier> = []
        var closing = false
        var saidCapped = false
        /// The most connections present (open or settling) at once since the allocator last
        /// gave memory back.
        var peak = 0
        /// Connections gone (closed and settled) since then, and the fewest present meanwhile
        /// (the long-lived ones: a status bar's subscription, a `watch`).
        var closedSinceTrim = 0
        var lowSinceTrim = Int.max

        /// Open, or closed with work of theirs still running: what still holds memory.
        var present: Int { connections.count + settling.count }

        /// A connection is gone for good (closed, its session settled): the departures since
        /// the last trim, if the allocator's free memory is to be given back now.
        mutating func departed() -> Int? {
            closedSinceTrim += 1
            let present = present
            let burstLeft = peak >= ControlConnectionRegistry.burstWorthTrimming && present <= peak / 4
            lowSinceTrim = min(lowSinceTrim, present)
            // Few present beyond those that stay: long-lived connections must not keep it from
            // happening (with five, it never did).
            let manyLeft = closedSinceTrim >= ControlConnectionRegistry.departuresWorthTrimming && present <= lowSinceTrim + 4
            guard burstLeft || manyLeft else { return nil }
            defer {
                peak = present
                closedSinceTrim = 0
                lowSinceTrim = present
            }
            return closedSinceTrim
        }
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
            state.peak = max(state.peak, state.present)
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
        // It has a session (it is idle): gone once that has settled.
        state.settling.insert(idle.key)
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

    /// The connection closed: one with a session settles later (`settled`), one without (refused
    /// for its uid) is gone now.
    func remove(_ connection: ControlConnection) {
        let trim = state.withLock { state -> Int? in
            let key = ObjectIdentifier(connection)
            guard let entry = state.connections.removeValue(forKey: key) else { return nil }
            guard entry.session == nil else {
                state.settling.insert(key)
                return nil
            }
            return state.departed()
        }
        trimIfDue(trim)
    }

    /// The closed connection's session has nothing running any more (from any thread): what the
    /// client left queued is freed.
    func settled(_ connection: ControlConnection) {
        let trim = state.withLock { state -> Int? in
            guard state.settling.remove(ObjectIdentifier(connection)) != nil else { return nil }
            return state.departed()
        }
        trimIfDue(trim)
    }

    private func trimIfDue(_ trim: Int?) {
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

    /// What the socket holds now, for `status`.
    func counts(_ census: ControlCensus) -> ControlWire.ControlSocketCounts {
        let (open, settling) = state.withLock { ($0.connections.count, $0.settling.count) }
        return ControlWire.ControlSocketCounts(
            accepted: census.accepted.load(ordering: .relaxed), open: open, settling: settling, connectionObjects: census.connectionObjects.load(ordering: .relaxed),
            sessionObjects: census.sessionObjects.load(ordering: .relaxed), unsentBytes: census.unsentBytes.load(ordering: .relaxed))
    }
}
