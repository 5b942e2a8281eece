/// A control connection's lifecycle as a value (as swift-nio keeps its own state machines):
/// whether reading is held, the input ended, a close is due once the output is written, the
/// connection closed, and where each dispatch source stands. Each input returns what the
/// connection must do; `ControlConnection` only performs it, so every order of events is
/// tested here without a socket (ControlConnectionLifecycleTests).
struct ControlConnectionLifecycle: Equatable {
    /// Where a dispatch source stands: libdispatch needs activate once, then suspend and
    /// resume in pairs, and a cancel handler runs only on a source that runs.
    enum Source: Equatable {
        case inactive, running, suspended
    }

    /// What to do to a source.
    enum SourceOperation: Equatable {
        case activate, resume, suspend, cancel
    }

    private(set) var reading = Source.inactive
    private(set) var writing = Source.inactive
    /// Reading waits for the owner's `resumeReading` (at the start, and after `holdReading`).
    private(set) var readingHeld = true
    /// A turn of reading is queued (more was waiting than one turn reads).
    private(set) var readScheduled = false
    private(set) var inputEnded = false
    private(set) var isClosed = false
    private(set) var closesWhenFlushed = false
    /// Sources whose cancel handler has run (the descriptor goes after both).
    private(set) var sourcesCancelled = 0

    /// Whether a turn of reading may take more from the socket now.
    var mayRead: Bool { !readingHeld && !isClosed && !inputEnded }

    // MARK: Reading

    /// The owner lets reading go on. `starts`: reading starts now (then what is already
    /// waiting is read at once: a source may report only new arrivals), with the read
    /// source's operation.
    mutating func resumeReading() -> (starts: Bool, operation: SourceOperation?) {
        guard readingHeld, !isClosed, !inputEnded else { return (false, nil) }
        readingHeld = false
        return (true, Self.run(&reading))
    }

    /// The owner holds reading back: the read source's operation, if it was reading.
    mutating func holdReading() -> SourceOperation? {
        guard !readingHeld, !isClosed else { return nil }
        readingHeld = true
        return Self.pause(&reading)
    }

    /// A turn of reading took `taken` bytes of at most `perTurn`: whether to queue another turn
    /// (more may be waiting, and the source does not say so again once the peer hung up).
    mutating func turnRead(taken: Int, perTurn: Int) -> Bool {
        guard taken >= perTurn, mayRead, !readScheduled else { return false }
        readScheduled = true
        return true
    }

    /// The queued turn runs.
    mutating func scheduledTurnRuns() { readScheduled = false }

    /// The client's input ended: the read source's operation (it would fire at the end for
    /// ever). The connection stays open for the answers unless the peer is gone altogether.
    /// After a close the source is cancelled and started for its cancel handler: suspending it
    /// again would keep that handler, and the descriptor's close, from ever running.
    mutating func inputEnds() -> SourceOperation? {
        inputEnded = true
        guard !isClosed else { return nil }
        return Self.pause(&reading)
    }

    // MARK: Writing

    /// The socket took everything: pause the write source; `close` says the close that waited
    /// for the output is due.
    mutating func outputFlushed() -> (operation: SourceOperation?, close: Bool) {
        guard !isClosed else { return (nil, false) }
        return (Self.pause(&writing), closesWhenFlushed)
    }

    /// The socket is full: the write source says when it takes more.
    mutating func outputBlocked() -> SourceOperation? {
        guard !isClosed else { return nil }
        return Self.run(&writing)
    }

    /// Whether a send should try to write now (not while the write source waits for room).
    var writesNow: Bool { writing != .running }

    /// Close once the output is written: true when that is now (nothing waits).
    mutating func closeWhenFlushed(outputEmpty: Bool) -> Bool {
        if outputEmpty { return true }
        closesWhenFlushed = true
        return false
    }

    // MARK: Closing

    /// Closes: the operations for both sources, in order (each cancel handler runs only on a
    /// running source, so a suspended or never started one is started after its cancel); nil
    /// when it was closed already.
    mutating func close() -> (read: [SourceOperation], write: [SourceOperation])? {
        guard !isClosed else { return nil }
        isClosed = true
        return (Self.cancel(&reading), Self.cancel(&writing))
    }

    /// A source's cancel handler ran: true once both have, when the descriptor can be closed.
    mutating func sourceCancelled() -> Bool {
        sourcesCancelled += 1
        return sourcesCancelled == 2
    }

    // MARK: Sources

    private static func run(_ state: inout Source) -> SourceOperation? {
        let operation: SourceOperation
        switch state {
        case .inactive: operation = .activate
        case .suspended: operation = .resume
        case .running: return nil
        }
        state = .running
        return operation
    }

    private static func pause(_ state: inout Source) -> SourceOperation? {
        guard state == .running else { return nil }
        state = .suspended
        return .suspend
    }

    private static func cancel(_ state: inout Source) -> [SourceOperation] {
        [.cancel] + [run(&state)].compactMap { $0 }
    }
}
