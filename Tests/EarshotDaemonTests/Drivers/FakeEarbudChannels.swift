import WireFields
import AccessoryDrivers
import Glibc
import Synchronization
import SystemBridge
import SystemPackage
import Testing

@testable import EarshotDaemon

/// Transports over socketpairs: each open hands the driver one end and the test the other
/// (SEQPACKET for AAP, STREAM for Galaxy Buds), where a `FakeEarbud` plays the device. The
/// radio is the one thing that cannot run here; everything above the socket is real.
final class SocketPairTransports: DriverTransports {
    private struct State {
        var peers: [FakeEarbud] = []
        var waiters: [CheckedContinuation<FakeEarbud, Never>] = []
        var failures: [DriverTransportError] = []
        var opens = 0
        /// Opens wait here while held (a connect to a device that does not answer yet).
        var held: [CheckedContinuation<Void, Never>]? = nil
    }

    private let state = Mutex(State())
    /// Told of each open, so a test waits on it instead of re-checking.
    let opened: ChangeSignal

    init(opened: ChangeSignal = ChangeSignal()) {
        self.opened = opened
    }

    /// The next opens fail with these, in order.
    func failNext(_ errors: [DriverTransportError]) { state.withLock { $0.failures += errors } }

    var opens: Int { state.withLock { $0.opens } }

    /// From now on every open waits until `release()`.
    func hold() { state.withLock { $0.held = $0.held ?? [] } }

    func release() {
        let waiting = state.withLock { state in
            defer { state.held = nil }
            return state.held ?? []
        }
        for waiter in waiting { waiter.resume() }
    }

    func open(_ device: DriverDevice, family: AccessoryFamily) async throws(DriverTransportError) -> BluetoothChannel {
        state.withLock { $0.opens += 1 }
        opened.fire()
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Bool in
                guard state.held != nil else { return false }
                state.held?.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
        let failure = state.withLock { state -> DriverTransportError? in
            state.failures.isEmpty ? nil : state.failures.removeFirst()
        }
        if let failure { throw failure }
        let kind = family.kind.channelKind
        var fds: [Int32] = [0, 0]
        let type = kind == .packets ? Int32(SOCK_SEQPACKET.rawValue) : Int32(SOCK_STREAM.rawValue)
        guard socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw .failed("socketpair: \(errno)") }
        let driverEnd = BluetoothChannel(adopting: FileDescriptor(rawValue: fds[0]), kind: kind, peer: "driver end")
        let peer = FakeEarbud(BluetoothChannel(adopting: FileDescriptor(rawValue: fds[1]), kind: kind, peer: "earbud end"))
        let waiter = state.withLock { state -> CheckedContinuation<FakeEarbud, Never>? in
            if state.waiters.isEmpty {
                state.peers.append(peer)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: peer)
        return driverEnd
    }

    /// The earbud end of the next channel the driver opens.
    func nextEarbud() async -> FakeEarbud {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> FakeEarbud? in
                if state.peers.isEmpty {
                    state.waiters.append(continuation)
                    return nil
                }
                return state.peers.removeFirst()
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// The device's end of a channel: what the driver sent, and packets to send it.
actor FakeEarbud {
    nonisolated let channel: BluetoothChannel
    private var events: AsyncStream<BluetoothChannel.Event>.Iterator?

    init(_ channel: BluetoothChannel) {
        self.channel = channel
        events = (try? channel.incoming(threadName: "fake-earbud"))?.makeAsyncIterator()
    }

    nonisolated func send(_ bytes: [UInt8]) throws { try channel.send(bytes) }

    /// The next packet (or chunk) the driver sent; nil when the driver closed the channel.
    func received() async -> [UInt8]? {
        guard var iterator = events else { return nil }
        var result: [UInt8]?
        while let event = await iterator.next(isolation: self) {
            if case .received(let bytes) = event { result = bytes }
            break
        }
        events = iterator
        return result
    }

    nonisolated func close() { channel.close() }
}

/// Fired on every daemon event and driver-board change, so a test waits for the next change
/// instead of sleeping.
final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var generation: UInt64 { state.withLock { $0.generation } }

    func fire() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns after the next change past `generation`, or at the deadline (`timeout`: the
    /// sleep is the deadline's arm, not a synchronisation).
    func wait(beyond generation: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.state.withLock { state in
                        if state.generation > generation { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // The waiter left behind resumes at the next fire.
            self.fire()
        }
    }
}
