import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A connected Bluetooth socket: an L2CAP SEQPACKET channel (AirPods' AAP, `.packets`) or an
/// RFCOMM stream (Galaxy Buds, `.stream`), connected here or handed over by BlueZ
/// (`Profile1.NewConnection`). Owns its descriptor: `close()` (or deinit) frees it, after
/// joining the reader thread, so the number is never closed under a thread still reading it.
///
/// Reads are event-driven: `startReading` (or `incoming`) runs a `PollThread` that sleeps in
/// poll(2) until data, the end or an error arrives; nothing polls on a timer.
public final class BluetoothChannel: Sendable {
    public enum Kind: Sendable, Hashable {
        /// SOCK_SEQPACKET (L2CAP): each send is one packet, each read one packet.
        case packets
        /// SOCK_STREAM (RFCOMM): bytes without boundaries; a read returns what is there.
        case stream
    }

    /// What the reader delivers.
    public enum Event: Sendable, Equatable {
        /// One packet (`.packets`) or one read's worth of bytes (`.stream`), at most
        /// `maximumRead` bytes (a longer packet is cut there).
        case received([UInt8])
        /// Delivered once, last: nil when the peer closed the channel, else why it broke.
        case ended(BluetoothError?)
    }

    /// The most one read delivers.
    public static let maximumRead = 4096

    public let kind: Kind
    /// Who is on the other end, for messages: `AA:BB:CC:DD:EE:FF PSM 0x1001`.
    public let peer: String
    private let socket: FileDescriptor
    private let state = Mutex(State())

    private struct State {
        var isClosed = false
        var isReading = false
        var reader: PollThread?
        /// Finishes the `incoming()` stream when the owner closes the channel.
        var onClose: (@Sendable () -> Void)?
    }

    /// Takes ownership of a connected socket: one BlueZ handed over, or a socketpair end in
    /// tests. It need not be non-blocking: every read and send here is (MSG_DONTWAIT).
    public init(adopting descriptor: FileDescriptor, kind: Kind, peer: String = "Bluetooth socket") {
        self.socket = descriptor
        self.kind = kind
        self.peer = peer
    }

    deinit { close() }

    /// The descriptor, for `getsockopt` and logs. Owned by the channel: don't close it.
    public var descriptor: FileDescriptor { socket }

    // MARK: - Sending

    /// Sends `bytes`: one packet on `.packets` (never split: a short send is an error), every
    /// byte on `.stream`. Waits for room in the socket's buffer at most `timeout`, so a link
    /// that stopped moving cannot hold the caller (or `close()`) forever. Any thread.
    public func send(_ bytes: [UInt8], timeout: Duration = .seconds(5)) throws(BluetoothError) {
        let deadline = ContinuousClock.now + timeout
        // Under the lock, so `close()` cannot free the number mid-send.
        try state.withLock { state throws(BluetoothError) in
            guard !state.isClosed else { throw BluetoothError(SystemError("send", detail: "the channel is closed", errno: .badFileDescriptor), peer: peer) }
            var offset = 0
            repeat {
                let sent = bytes[offset...].withUnsafeBytes {
                    Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if sent >= 0 {
                    if kind == .packets, sent != bytes.count {
                        throw BluetoothError(SystemError("send", detail: "sent \(sent) of a \(bytes.count)-byte packet", errno: .messageTooLong), peer: peer)
                    }
                    offset += sent
                    continue
                }
                let error = Errno.current
                if error == .interrupted { continue }
                guard error == .wouldBlock || error == .resourceTemporarilyUnavailable else {
                    throw BluetoothError(SystemError("send", errno: error), peer: peer)
                }
                try waitForRoom(until: deadline, timeout: timeout)
            } while offset < bytes.count
        }
    }

    private func waitForRoom(until deadline: ContinuousClock.Instant, timeout: Duration) throws(BluetoothError) {
        while true {
            let left = deadline - ContinuousClock.now
            var entry = pollfd(fd: socket.rawValue, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, Readiness.milliseconds(left))
            if ready > 0 { return }  // room, or an error the next send reports
            if ready < 0, Errno.current == .interrupted { continue }
            if ready < 0 { throw BluetoothError(SystemError("poll", errno: .current), peer: peer) }
            throw BluetoothError(SystemError("send", detail: "no room in the socket buffer within \(timeout)", errno: .timedOut), peer: peer)
        }
    }

    // MARK: - Reading

    /// Starts the reader thread (named `threadName`, 15 bytes at most, for `ps -L`), which
    /// calls `handler` **on that thread** with each packet or chunk as it arrives, then once
    /// with `.ended` when the peer closes or the connection breaks, and ends. Once `close()`
    /// or `stopReading()` returned, `handler` is not called again (and no `.ended` is sent:
    /// the owner asked). Keep `handler` short, and never call `close()` or `stopReading()`
    /// from it, nor let it hold the last reference to the channel (deinit closes): they join
    /// this thread. Call at most once.
    public func startReading(threadName: String = "bt-reader", _ handler: @escaping @Sendable (Event) -> Void) throws(BluetoothError) {
        let fd = socket.rawValue
        let peer = peer
        try state.withLock { state throws(BluetoothError) in
            guard !state.isClosed else {
                throw BluetoothError(SystemError("read", detail: "the channel is closed", errno: .badFileDescriptor), peer: peer)
            }
            precondition(!state.isReading, "BluetoothChannel.startReading called twice")
            do throws(SystemError) {
                state.reader = try PollThread(watchingUntilEnd: fd, name: threadName) { hungUp in
                    Self.readOnce(fd, peer: peer, hungUp: hungUp, handler)
                }
            } catch { throw BluetoothError(error, peer: peer) }
            state.isReading = true
        }
    }

    /// `startReading` as an `AsyncStream`: every event, finished after `.ended` or when the
    /// channel is closed.
    public func incoming(threadName: String = "bt-reader") throws(BluetoothError) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        state.withLock { $0.onClose = { continuation.finish() } }
        do throws(BluetoothError) {
            try startReading(threadName: threadName) { event in
                continuation.yield(event)
                if case .ended = event { continuation.finish() }
            }
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    /// One read after poll woke the thread; false when the channel has ended (reported).
    private static func readOnce(_ fd: Int32, peer: String, hungUp: Bool, _ handler: @Sendable (Event) -> Void) -> Bool {
        var buffer = [UInt8](repeating: 0, count: maximumRead)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                handler(.received(Array(buffer[..<count])))
                return true
            }
            // A Bluetooth or stream socket reads 0 only at its end (AAP sends no empty packets).
            if count == 0 {
                handler(.ended(nil))
                return false
            }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .wouldBlock || error == .resourceTemporarilyUnavailable {
                guard hungUp else { return true }  // woken for nothing
                // Hung up with nothing to read: the pending error, if any, says why.
                handler(.ended(pendingError(fd).map { BluetoothError(SystemError("recv", errno: $0), peer: peer) }))
                return false
            }
            handler(.ended(BluetoothError(SystemError("recv", errno: error), peer: peer)))
            return false
        }
    }

    /// getsockopt(SO_ERROR): the error a socket holds, nil for none.
    static func pendingError(_ fd: Int32) -> Errno? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return .current }
        return code == 0 ? nil : Errno(rawValue: code)
    }

    // MARK: - Closing

    /// Stops the reader (joins its thread; no more events) but keeps the socket open.
    public func stopReading() {
        let (reader, onClose) = state.withLock { state in
            defer { state.reader = nil; state.onClose = nil }
            return (state.reader, state.onClose)
        }
        reader?.stop()
        onClose?()
    }

    /// Stops the reader, then closes the socket, after any send in progress (bounded by that
    /// send's timeout). Idempotent; any thread but the reader's.
    public func close() {
        stopReading()
        let wasOpen = state.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        if wasOpen { _ = try? socket.close() }
    }
}
