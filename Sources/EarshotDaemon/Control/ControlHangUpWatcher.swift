import Dispatch
import SystemBridge

/// Watches the connections whose clients shut their sending side for the moment they go away
/// altogether, and closes them then: a subscriber that half-closed and exited must not hold its
/// place (subscribers are never idle, so never the first to go at the connection cap) until an
/// event happens to fail on it. One epoll instance for all of them, one dispatch source on it,
/// on the control queue; nothing runs until one goes.
final class ControlHangUpWatcher: @unchecked Sendable {
    private let queue: DispatchQueue
    private let watch: HangUpWatch?
    private let source: DispatchSourceRead?
    // On `queue` only:
    private var watched: [UInt64: (connection: ControlConnection, descriptor: Int32)] = [:]
    private var nextToken: UInt64 = 0
    /// After `stop` the watch's descriptor is closed (and its number may be another's).
    private var stopped = false

    init(queue: DispatchQueue) {
        self.queue = queue
        // Without an epoll instance (out of descriptors at start), a half-closed client that
        // leaves is noticed at the next write to it, as before.
        watch = try? HangUpWatch.create()
        source = watch.map { DispatchSource.makeReadSource(fileDescriptor: $0.descriptor, queue: queue) }
        guard let watch, let source else { return }
        source.setEventHandler { [self] in closeGone() }
        source.setCancelHandler { watch.close() }
        source.activate()
    }

    /// Watches `connection` until it closes; its token, for `forget`. On `queue`.
    func watch(_ connection: ControlConnection) -> UInt64? {
        guard let watch, !stopped else { return nil }
        nextToken += 1
        do {
            try watch.add(connection.descriptor, token: nextToken)
        } catch {
            return nil
        }
        watched[nextToken] = (connection, connection.descriptor)
        return nextToken
    }

    /// Stops watching (the connection closes; its descriptor is still open). On `queue`.
    func forget(_ token: UInt64) {
        guard let entry = watched.removeValue(forKey: token) else { return }
        watch?.remove(entry.descriptor)
    }

    /// Stops watching anything (the server closes).
    func stop() {
        queue.async { [self] in
            guard !stopped else { return }
            stopped = true
            for entry in watched.values { watch?.remove(entry.descriptor) }
            watched = [:]
            source?.cancel()
        }
    }

    private func closeGone() {
        guard let watch else { return }
        for token in watch.gone() {
            // Closing forgets it (removes it from the watch), so the watch is quiet again.
            watched[token]?.connection.closeOnQueue()
        }
    }
}
