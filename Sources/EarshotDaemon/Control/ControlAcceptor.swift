import WireFields
import ControlProtocol
import Dispatch
import FoundationEssentials
import RoutingPolicy
import Synchronization
import SystemBridge
import SystemPackage

/// Accepts connections on the control queue while the listener is readable, and admits
/// each: the registry's cap first, then the peer's uid (ControlConnectionHandler).
final class ControlAcceptor: @unchecked Sendable {
    private let control: any DaemonControl
    private let limits: ControlLimits
    private let connections: ControlConnectionRegistry
    private let queue = DispatchQueue(label: "earshot.control")
    private let readBuffer = ControlReadBuffer()
    private let census: ControlCensus
    /// The descriptor limit kept under, and the number from which a connection is shed
    /// (ControlLimits.sheddingDescriptor); nil: no limit.
    private let descriptorLimit: UInt64?
    private let sheddingDescriptor: Int32?
    private let hangUps: ControlHangUpWatcher
    private let allowedUID = CurrentProcess.userID
    // On `queue` only (set up in init, before the queue runs anything of it):
    private var listener: UnixListener
    private var source: DispatchSourceRead
    /// When shedding for want of descriptors was last said: at most once a minute.
    private var saidShedding: ContinuousClock.Instant?
    /// Accepting failed (out of descriptors): it waits until a connection closes, or the
    /// backoff's time has passed (descriptors may be freed elsewhere in the daemon).
    private var waitingForDescriptors = false
    /// The next retry's delay while accepting fails: 1 s, doubling to 32 s.
    private var retryDelay: Duration
    /// Which wait a retry timer belongs to: a timer of an earlier wait does nothing.
    private var waits: UInt64 = 0
    /// When running out of descriptors was last said: at most once a minute.
    private var saidOutOfDescriptors: ContinuousClock.Instant?
    private var stopped = false

    /// Connections accepted in one turn at most, so a flood of them cannot hold the queue: the
    /// source fires again for the rest (it is level triggered).
    private static let acceptsPerTurn = 64
    private var longestRetryDelay: Duration { max(.seconds(32), limits.firstAcceptRetryDelay) }

    init(listener: UnixListener, control: any DaemonControl, limits: ControlLimits, connections: ControlConnectionRegistry, census: ControlCensus) {
        self.listener = listener
        self.census = census
        self.control = control
        self.limits = limits
        self.connections = connections
        retryDelay = limits.firstAcceptRetryDelay
        descriptorLimit = limits.descriptorLimit ?? CurrentProcess.descriptorLimit
        sheddingDescriptor = descriptorLimit.map(ControlLimits.sheddingDescriptor(limit:))
        source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: queue)
        hangUps = ControlHangUpWatcher(queue: queue)
    }

    func start() {
        source.setEventHandler { [self] in acceptAvailable() }
        source.setCancelHandler { [listener] in listener.close() }
        source.activate()
    }

    /// Listens on `new` from now on (the socket file was made again); the old listener, which
    /// no client can reach any more, is closed once its source is done with it.
    func replaceListener(_ new: UnixListener) {
        queue.async { [self] in
            guard !stopped else {
                new.close()
                return
            }
            // Clients that reached the old file before it went: taken, not dropped with it.
            if !waitingForDescriptors { acceptAvailable() }
            let old = source
            old.setCancelHandler { [listener] in listener.close() }
            old.cancel()
            if waitingForDescriptors { old.resume() }
            listener = new
            source = DispatchSource.makeReadSource(fileDescriptor: new.descriptor, queue: queue)
            source.setEventHandler { [self] in acceptAvailable() }
            source.setCancelHandler { [new] in new.close() }
            source.activate()
            if waitingForDescriptors { source.suspend() }
        }
    }

    /// Stops accepting; returns once the listening descriptor is closed.
    func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                stopped = true
                source.setCancelHandler { [listener] in
                    listener.close()
                    done.resume()
                }
                source.cancel()
                if waitingForDescriptors { source.resume() }
            }
        }
        hangUps.stop()
    }

    private func acceptAvailable() {
        for _ in 0..<Self.acceptsPerTurn {
            guard !stopped, !waitingForDescriptors else { return }
            let descriptor: Int32
            do {
                guard let accepted = try listener.accept() else { return }
                descriptor = accepted
            } catch {
                return acceptFailed(error)
            }
            retryDelay = limits.firstAcceptRetryDelay
            if admit(descriptor) == .shed { return pauseForRelease() }
        }
    }

    /// A connection was shed for want of descriptors: accepting waits until a descriptor is
    /// released (the shed one's, or the idle one closed for it), so a burst cannot accept past
    /// the limit in one turn while the closes are still queued; or the first retry's delay.
    private func pauseForRelease() {
        waitingForDescriptors = true
        source.suspend()
        waits += 1
        let wait = waits
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(limits.firstAcceptRetryDelay / .milliseconds(1)))) { [weak self] in
            guard let self, wait == waits else { return }
            resumeAccepting()
        }
    }

    /// Out of descriptors (EMFILE, ENFILE), or another failure of accept: the connection stays
    /// in the backlog and the listener stays readable, so retrying at once would spin. Accepting
    /// waits for a connection of its own to close (which frees a descriptor), or for the
    /// backoff's delay (descriptors freed elsewhere, a passing ENOBUFS), whichever comes first.
    private func acceptFailed(_ error: SystemError) {
        waitingForDescriptors = true
        source.suspend()
        // Out of descriptors with connections sitting idle: the oldest makes room at once (its
        // close frees a descriptor, and its release resumes accepting). Waiting instead would
        // leave the newcomer in the backlog for as long as the idle ones stay, and the table
        // full for the runtime too.
        if error.errno == .tooManyOpenFiles || error.errno == .tooManyOpenFilesInSystem, let idle = connections.closeOldestIdle() {
            idle.close()
        }
        waits += 1
        let wait = waits
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, longestRetryDelay)
        let now = ContinuousClock.now
        if saidOutOfDescriptors.map({ now - $0 >= .seconds(60) }) ?? true {
            saidOutOfDescriptors = now
            ControlConnectionRegistry.warn("control socket: cannot accept a connection (\(error)): new connections wait until one closes, or \(delay) at most (said at most once a minute)")
        }
        // Weak: a server stopped meanwhile is not kept for the rest of the delay.
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay / .milliseconds(1)))) { [weak self] in
            guard let self, wait == waits else { return }
            resumeAccepting()
        }
    }

    /// Accepting again after a failure: at once, then as the listener says.
    private func resumeAccepting() {
        guard waitingForDescriptors, !stopped else { return }
        waitingForDescriptors = false
        source.resume()
        acceptAvailable()
    }

    /// Whether the descriptor was past the limit's ceiling (the connection, or an idle one for
    /// it, is being closed).
    private enum Admission { case withinLimit, shed }

    private func admit(_ descriptor: Int32) -> Admission {
        let connection = ControlConnection(
            descriptor: descriptor, queue: queue, limits: limits, readBuffer: readBuffer, hangUps: hangUps, census: census)
        let open = openDescriptors(with: descriptor)
        let short = sheddingDescriptor.map { open >= Int($0) } ?? false
        if short { saySheddingOnce(open) }
        guard connections.add(connection, descriptorsShort: short) else {
            connection.start(ControlConnection.Handlers(frame: { _ in }, inputEnded: {}, closed: {}, released: { [self] in resumeAccepting() }))
            if short {
                let error = AccessoryError(.unknown, "the daemon is short of file descriptors (\(open) open of its limit of \(descriptorLimit ?? 0), some kept spare for PipeWire, D-Bus and the runtime): try again once other clients have closed")
                connection.send(ControlWire.line(ControlWire.failure(id: nil, error)))
                connection.closeWhenFlushed()
            } else {
                connection.close()
            }
            return short ? .shed : .withinLimit
        }
        let handler = ControlConnectionHandler(
            connection: connection, queue: queue, control: control, limits: limits, census: census,
            socketCounts: { [connections, census] in connections.counts(census) })
        handler.start(
            allowedUID: allowedUID, admitted: { session in connections.attach(session, to: connection) },
            closed: { [connections] in connections.remove(connection) },
            settled: { [connections] in connections.settled(connection) },
            // Once its descriptor is really closed: accepting can go on if it waited for one.
            released: { [self] in resumeAccepting() })
        return short ? .shed : .withinLimit
    }
}

extension ControlAcceptor {
    /// How many descriptors are open with the one just accepted: at least its number + 1
    /// (lowest first), counted under a low limit (ControlLimits.countedLimit).
    private func openDescriptors(with descriptor: Int32) -> Int {
        let lowerBound = Int(descriptor) + 1
        guard let descriptorLimit, descriptorLimit <= ControlLimits.countedLimit,
            let sheddingDescriptor, lowerBound < Int(sheddingDescriptor)
        else { return lowerBound }
        return max(lowerBound, CurrentProcess.openDescriptorCount() ?? lowerBound)
    }

    /// Shedding is said at most once a minute, with what frees it.
    private func saySheddingOnce(_ open: Int) {
        let now = ContinuousClock.now
        guard saidShedding.map({ now - $0 >= .seconds(60) }) ?? true else { return }
        saidShedding = now
        ControlConnectionRegistry.warn("control socket: \(open) descriptors open, near the limit: new connections close the oldest idle one or are refused until some close, keeping descriptors spare for PipeWire, D-Bus and the runtime (said at most once a minute)")
    }
}
