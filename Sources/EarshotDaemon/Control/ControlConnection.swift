import Dispatch
import Synchronization
import SystemBridge

/// One control connection's socket, driven by dispatch sources on the control queue: reads
/// become lines (ControlLineFramer), writes are buffered while the socket is full, and a client
/// whose unread output passes `maximumPendingOutputBytes` is cut off rather than buffered for
/// without end. Reading starts only when the owner allows it (`resumeReading`) and stops while
/// it holds it back, so a client that floods waits in its own socket, not in the daemon.
///
/// Every mutable property is touched only on `queue`; other threads send and close through
/// it. The descriptor is closed once both sources are cancelled.
final class ControlConnection: @unchecked Sendable {
    let descriptor: Int32
    private let queue: DispatchQueue
    private let maximumPendingOutputBytes: Int
    private let readSource: DispatchSourceRead
    private let writeSource: DispatchSourceWrite
    private let hangUps: ControlHangUpWatcher
    private let census: ControlCensus
    /// Bytes passed to `send` and not yet taken by the socket, readable from any thread.
    private let unsent = Atomic<Int>(0)
    /// Of those, the events' (`send(_:event:)`): a subscriber's own bound.
    private let unsentEvents = Atomic<Int>(0)

    // On `queue` only:
    /// Which phase the connection is in: it decides, this class performs.
    private var lifecycle = ControlConnectionLifecycle()
    private var framer: ControlLineFramer
    private var handlers: Handlers?
    private var output = ControlOutputBuffer()
    /// Watched for the client going away after it shut its sending side.
    private var hangUpToken: UInt64?
    /// Told once the descriptor is closed (a descriptor is free again).
    private var released: (() -> Void)?

    /// What the connection tells its owner, on the control queue.
    struct Handlers {
        /// A complete line, or the news that one was too long.
        var frame: (ControlFrame) -> Void
        /// The client shut its sending side (the connection stays open for the answers).
        var inputEnded: () -> Void
        /// The connection closed (either side, or cut off); nothing more comes.
        var closed: () -> Void
        /// Its descriptor is closed: one is free again.
        var released: () -> Void = {}
    }

    private let readBuffer: ControlReadBuffer

    init(
        descriptor: Int32, queue: DispatchQueue, limits: ControlLimits, readBuffer: ControlReadBuffer, hangUps: ControlHangUpWatcher,
        census: ControlCensus = ControlCensus()
    ) {
        self.descriptor = descriptor
        self.census = census
        census.accepted.add(1, ordering: .relaxed)
        census.connectionObjects.add(1, ordering: .relaxed)
        self.queue = queue
        self.readBuffer = readBuffer
        self.hangUps = hangUps
        maximumPendingOutputBytes = limits.maximumPendingOutputBytes
        framer = ControlLineFramer(maximumLineBytes: limits.maximumLineBytes)
        readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
    }

    deinit { census.connectionObjects.subtract(1, ordering: .relaxed) }

    /// Sets what the connection reports to, and starts it (reading still held). On `queue`.
    func start(_ handlers: Handlers) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.handlers = handlers
        released = handlers.released
        readSource.setEventHandler { [self] in readAvailable() }
        readSource.setCancelHandler { [self] in sourceCancelled() }
        writeSource.setEventHandler { [self] in flushOutput() }
        writeSource.setCancelHandler { [self] in sourceCancelled() }
    }

    // MARK: Reading

    /// Lets reading go on (at the start, and after `holdReading`). On `queue`.
    func resumeReading() {
        dispatchPrecondition(condition: .onQueue(queue))
        let resumed = lifecycle.resumeReading()
        guard resumed.starts else { return }
        perform(resumed.operation, on: readSource)
        // What is already waiting is read now: a source may report only new arrivals.
        readAvailable()
    }

    /// Stops reading until `resumeReading`: what the client sends waits in its socket. On `queue`.
    func holdReading() {
        dispatchPrecondition(condition: .onQueue(queue))
        perform(lifecycle.holdReading(), on: readSource)
    }

    /// At most this much is read in one turn, so one flooding client cannot hold the queue; the
    /// rest in a turn of its own, after the other connections' events. Not left to the source:
    /// libdispatch stops watching a descriptor once its peer hangs up (one last event), so what
    /// a client wrote before it went would never be read, and its end never seen.
    private static let bytesPerTurn = 64 * 1024

    private func readAvailable() {
        var taken = 0
        defer {
            if lifecycle.turnRead(taken: taken, perTurn: Self.bytesPerTurn) {
                queue.async { [self] in
                    lifecycle.scheduledTurnRuns()
                    readAvailable()
                }
            }
        }
        while lifecycle.mayRead, taken < Self.bytesPerTurn {
            let received: NonblockingSocket.Received
            do {
                received = try NonblockingSocket.receive(descriptor, into: readBuffer.bytes)
            } catch {
                return closeNow()
            }
            switch received {
            case .wouldBlock:
                return
            case .end:
                return endOfInput()
            case .bytes(let count):
                taken += count
                framer.take(UnsafeRawBufferPointer(rebasing: readBuffer.bytes[..<count])) { frame in handlers?.frame(frame) }
            }
        }
    }

    /// The client's input ended. One that only shut down its sending side still reads the
    /// answers (socat after its stdin ends), and is watched for going away altogether (the read
    /// source, which would fire at the end for ever, stops); one that is gone is closed now.
    private func endOfInput() {
        framer.end()
        perform(lifecycle.inputEnds(), on: readSource)
        if NonblockingSocket.peerHungUp(descriptor) { return closeNow() }
        hangUpToken = hangUps.watch(self)
        handlers?.inputEnded()
    }

    // MARK: Writing

    /// Bytes passed to `send` and not yet taken by the socket, from any thread.
    var unsentBytes: Int { unsent.load(ordering: .relaxed) }
    /// Of those, the events', from any thread (an event partly written counts whole).
    var unsentEventBytes: Int { unsentEvents.load(ordering: .relaxed) }

    /// Writes `bytes` after everything sent before, from any thread; `event`: counted in
    /// `unsentEventBytes` too. A connection already closed drops them.
    func send(_ bytes: some Collection<UInt8> & Sendable, event: Bool = false) {
        let count = bytes.count
        addUnsent(count)
        if event { unsentEvents.add(count, ordering: .relaxed) }
        queue.async { [self] in
            guard !lifecycle.isClosed else {
                addUnsent(-count)
                if event { unsentEvents.subtract(count, ordering: .relaxed) }
                return
            }
            output.append(bytes, tagged: event)
            guard output.unsentCount <= maximumPendingOutputBytes else {
                // The client does not read: cut off.
                return closeNow()
            }
            if lifecycle.writesNow { flushOutput() }
        }
    }

    private func flushOutput() {
        guard !lifecycle.isClosed else { return }
        while !output.isEmpty {
            let written: Int
            do {
                written = try output.withUnsent { try NonblockingSocket.send(descriptor, $0) }
            } catch {
                return closeNow()
            }
            guard written > 0 else {
                // The socket is full: the write source says when it takes more.
                perform(lifecycle.outputBlocked(), on: writeSource)
                return
            }
            let events = output.consume(written)
            addUnsent(-written)
            if events > 0 { unsentEvents.subtract(events, ordering: .relaxed) }
        }
        let flushed = lifecycle.outputFlushed()
        perform(flushed.operation, on: writeSource)
        if flushed.close { closeNow() }
    }

    /// Counts `delta` more bytes sent and not yet taken, here and in the server's census.
    private func addUnsent(_ delta: Int) {
        unsent.add(delta, ordering: .relaxed)
        census.unsentBytes.add(delta, ordering: .relaxed)
    }

    /// Closes the connection once everything sent before is written (a refusal, the last
    /// answer), from any thread.
    func closeWhenFlushed() {
        queue.async { [self] in
            if lifecycle.closeWhenFlushed(outputEmpty: output.isEmpty) { closeNow() }
        }
    }

    // MARK: Closing

    /// Closes the connection, from any thread; what is not yet written is dropped.
    func close() {
        queue.async { [self] in closeNow() }
    }

    /// `close`, already on the queue.
    func closeOnQueue() {
        dispatchPrecondition(condition: .onQueue(queue))
        closeNow()
    }

    private func closeNow() {
        guard let operations = lifecycle.close() else { return }
        if let hangUpToken { hangUps.forget(hangUpToken) }
        addUnsent(-output.unsentCount)
        unsentEvents.subtract(output.unsentTaggedCount, ordering: .relaxed)
        output = ControlOutputBuffer()
        // A source runs its cancel handler only once it runs: a suspended or never started one
        // is started after its cancel (its event handler does nothing once closed).
        for operation in operations.read { perform(operation, on: readSource) }
        for operation in operations.write { perform(operation, on: writeSource) }
        let closed = handlers?.closed
        handlers = nil
        closed?()
    }

    /// Both sources are done with the descriptor: it can go.
    private func sourceCancelled() {
        guard lifecycle.sourceCancelled() else { return }
        NonblockingSocket.close(descriptor)
        let released = released
        self.released = nil
        released?()
    }

    // MARK: Sources

    private func perform(_ operation: ControlConnectionLifecycle.SourceOperation?, on source: some DispatchSourceProtocol) {
        switch operation {
        case .activate: source.activate()
        case .resume: source.resume()
        case .suspend: source.suspend()
        case .cancel: source.cancel()
        case nil: break
        }
    }
}

/// The read buffer the connections of one server share: all of them read on its one serial
/// queue, so 512 connections hold 16 KiB for reading, not 512 times that. Each connection holds
/// it, so it goes with the last of them (they may outlive their server by a turn of the queue).
final class ControlReadBuffer: @unchecked Sendable {
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)

    deinit { bytes.deallocate() }
}
