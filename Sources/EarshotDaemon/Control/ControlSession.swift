import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials
import RoutingPolicy
import Synchronization
import SystemBridge

/// One connection's async side: answers its requests one at a time and in order through the
/// daemon, and streams its subscription. Writes never wait for the client to read: a client
/// that falls behind is cut off by the output bound (ControlConnection), so neither the
/// daemon nor other clients ever wait on it.
final class ControlSession: Sendable {
    private let connection: ControlConnection
    private let control: any DaemonControl
    private let limits: ControlLimits
    private let frames: AsyncStream<Received>.Continuation
    private let tasks = Mutex(Tasks())
    private let census: ControlCensus
    /// The socket's counts, for `status`'s `diagnostics.control`.
    private let socketCounts: @Sendable () -> ControlWire.ControlSocketCounts
    /// Told once, when the connection has closed and the last task of the session has ended.
    private let settled: @Sendable () -> Void
    /// Requests received and not yet answered, and whether the connection streams (subscribed
    /// or recording): an idle connection is the first to go when the connections are capped.
    private let inFlight = Atomic<Int>(0)
    private let streams = Atomic<Bool>(false)

    /// No request in flight and nothing streaming.
    var isIdle: Bool { inFlight.load(ordering: .relaxed) == 0 && !streams.load(ordering: .relaxed) }
    /// When this connection last had a request answered, on `ControlActivity`'s count (0: never):
    /// the one idle the longest is the first to go at the connection cap.
    var lastActivity: UInt64 { activity.load(ordering: .relaxed) }
    private let activity = Atomic<UInt64>(0)

    private struct Tasks {
        /// Tasks still running, by a number of their own: each removes itself when done, so a
        /// long-lived connection holds only what is in flight (a task kept per request grew
        /// one connection by 1.35 KB a request, issue 21).
        var running: [UInt64: Task<Void, Never>] = [:]
        var next: UInt64 = 0
        var ended = false
        var saidSettled = false

        /// Whether the session has just settled (ended, nothing running): true once.
        mutating func settles() -> Bool {
            guard ended, running.isEmpty, !saidSettled else { return false }
            saidSettled = true
            return true
        }
    }

    /// A frame and when it was read (`MonotonicClock`: a request's switch is timed from it).
    private struct Received: Sendable {
        var frame: ControlFrame
        var at: UInt64
    }

    /// `answered` runs after each request is answered, so the handler can read more; `settled`
    /// once the connection has closed and nothing of the session runs any more (what the client
    /// left queued is answered, saved or dropped by then).
    init(
        connection: ControlConnection, control: any DaemonControl, limits: ControlLimits, census: ControlCensus,
        socketCounts: @escaping @Sendable () -> ControlWire.ControlSocketCounts, settled: @escaping @Sendable () -> Void,
        answered: @escaping @Sendable () -> Void
    ) {
        self.connection = connection
        self.control = control
        self.limits = limits
        self.census = census
        self.socketCounts = socketCounts
        self.settled = settled
        census.sessionObjects.add(1, ordering: .relaxed)
        // Unbounded here because the handler bounds it: it stops reading at maximumQueuedRequests.
        let (stream, continuation) = AsyncStream<Received>.makeStream()
        frames = continuation
        run { [self] in
            await serve(stream) { [self] in
                activity.store(ControlActivity.next(), ordering: .relaxed)
                inFlight.subtract(1, ordering: .relaxed)
                answered()
            }
        }
    }

    deinit { census.sessionObjects.subtract(1, ordering: .relaxed) }

    func receive(_ frame: ControlFrame) {
        inFlight.add(1, ordering: .relaxed)
        frames.yield(Received(frame: frame, at: MonotonicClock.nanoseconds()))
    }

    /// The client closed its side: answer what it sent, then close (unless it subscribed).
    func inputEnded() { frames.finish() }

    /// The connection is gone: stop everything. What the client sent and the session has not
    /// taken yet is dropped, but for changes (serve).
    func end() {
        frames.finish()
        let (running, settles) = tasks.withLock { tasks in
            tasks.ended = true
            return (Array(tasks.running.values), tasks.settles())
        }
        for task in running { task.cancel() }
        if settles { settled() }
    }

    /// Whether the connection is gone (`end`).
    private var hasEnded: Bool { tasks.withLock { $0.ended } }

    /// Returns once every task of the session has ended (after `end`, promptly, unless the
    /// daemon is still answering a request).
    func finished() async {
        while let task = tasks.withLock({ $0.running.first?.value }) {
            await task.value
        }
    }

    /// Runs `body` as a task of the session: kept (to cancel at the end, and for `finished` and
    /// `settled`) while it runs, and forgotten once it is done; one started after the end (the
    /// save of a change a departed client sent) is cancelled at once, and still waited for.
    @discardableResult
    private func run(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        tasks.withLock { tasks in
            let id = tasks.next
            tasks.next += 1
            // The task removes itself under the same lock, so it cannot do so before it is in.
            let task = Task { [self] in
                await body()
                let settles = self.tasks.withLock { tasks in
                    tasks.running.removeValue(forKey: id)
                    return tasks.settles()
                }
                if settles { self.settled() }
            }
            if tasks.ended { task.cancel() }
            tasks.running[id] = task
            return task
        }
    }

    private func serve(_ frames: AsyncStream<Received>, answered: @escaping @Sendable () -> Void) async {
        var subscribed = false
        /// The connection streams a recording (`record`): no events may mix into it.
        var streamsRecording = false
        // The reporter of the last register made on this connection: updates and unregisters
        // that name no reporter speak for it.
        var reporter: String?
        // Replies still waiting for their change to reach the disk, in order. The next request
        // is taken meanwhile (up to the handler's bound of requests not yet answered), so the
        // changes of a pipelining client share writes; every reply is written in request order.
        var pending: Task<Void, Never>?
        /// Writes `line` after every earlier reply and, if given, once `saved` returns.
        func emit(_ line: Data, after saved: (@Sendable () async -> Void)? = nil) {
            // Answered (idle again) before the reply is written: a client that has its reply
            // must never be taken for busy (at the connection cap, the idle ones make room).
            guard saved != nil || pending != nil else {
                answered()
                write(line: line)
                return
            }
            let previous = pending
            pending = run { [self] in
                await previous?.value
                await saved?()
                answered()
                write(line: line)
            }
        }
        for await received in frames {
            switch received.frame {
            case .line(let bytes):
                let line = Data(bytes)
                // Blank lines (a stray Enter in socat) are not requests.
                guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else {
                    answered()
                    continue
                }
                switch ControlWire.request(from: line) {
                case .failure where hasEnded:
                    answered()
                case .success(let request) where !request.command.isChange && hasEnded:
                    // The client is gone (it closed without reading: crashed, or impatient): no
                    // one can read an answer, so none is made; what it left queued goes with it
                    // (3000 such clients kept the daemon answering them for seconds after they
                    // left, issue 38). A change it sent is still made: whether it was read
                    // before its hang-up was seen must not decide that.
                    answered()
                case .failure(let failure):
                    emit(ControlWire.line(ControlWire.failure(id: failure.id, failure.error)))
                case .success(let request) where request.command == .subscribe:
                    // Earlier replies first: events must not overtake them.
                    await pending?.value
                    pending = nil
                    guard !streamsRecording else {
                        emit(ControlWire.line(ControlWire.failure(
                            id: request.id, AccessoryError(.invalidRequest, "this connection streams a recording: subscribe on another"))))
                        continue
                    }
                    // Subscribed before the ok is written (a client acts on the ok: an event
                    // its next step causes must not slip in between, as a jack read right
                    // after did), and forwarded only after it, so the ok comes first.
                    let events = subscribed ? nil : await control.subscribeLines()
                    if events != nil {
                        subscribed = true
                        streams.store(true, ordering: .relaxed)
                    }
                    answered()
                    write(ControlWire.success(id: request.id, ControlWire.SubscribeResult()))
                    if let events { forward(events) }
                case .success(let request) where request.command == .record:
                    await pending?.value
                    pending = nil
                    guard !subscribed, let recording = await control.startRecording() else {
                        let why = subscribed ? "this connection already streams (subscribe or record): open another" : "too many recordings at once (\(InputRecorder.maximumRecordings)): stop one first"
                        emit(ControlWire.line(ControlWire.failure(id: request.id, AccessoryError(.invalidRequest, why))))
                        continue
                    }
                    subscribed = true
                    streamsRecording = true
                    streams.store(true, ordering: .relaxed)
                    answered()
                    write(ControlWire.success(id: request.id, ControlWire.RecordResult(graph: recording.graph)))
                    startRecording(recording)
                case .success(let request):
                    let (reply, saved) = await answer(request, reporter: &reporter, read: received.at)
                    emit(reply, after: saved)
                }
            case .tooLong:
                // Gone: nothing after the line is taken, as for a client still there.
                guard !hasEnded else { return }
                await pending?.value
                let kib = limits.maximumLineBytes / 1024
                let error = AccessoryError(.invalidRequest, "line longer than \(limits.maximumLineBytes) bytes: send each request as one line of JSON under \(kib) KiB; closing the connection")
                write(ControlWire.failure(id: nil, error))
                connection.closeWhenFlushed()
                return
            }
        }
        await pending?.value
        guard !Task.isCancelled, !subscribed else { return }
        connection.closeWhenFlushed()
    }

    /// The reply line to `request`.
    /// The reply line to `request`, and for a change, what to wait for before writing it (its
    /// save).
    private func answer(_ request: ControlRequest, reporter: inout String?, read: UInt64) async -> (Data, (@Sendable () async -> Void)?) {
        func reply(_ result: some Codable & Sendable) -> Data { ControlWire.line(ControlWire.success(id: request.id, result)) }
        func refusal(_ error: AccessoryError) -> Data { ControlWire.line(ControlWire.failure(id: request.id, error)) }
        switch request.command {
        case .accessory(let asked):
            let accessoryRequest = asked.naming(reporter)
            guard let named = accessoryRequest.reporter else {
                return (refusal(AccessoryError(.invalidRequest, "\(asked.verb) needs a reporter: register on this connection first, or give \"reporter\" (the owner's reverse-DNS name)")), nil)
            }
            let (result, saved) = await control.performUnsaved(accessoryRequest, read: read)
            switch result {
            case .success(let configuration):
                var warnings: [String]?
                if case .register = accessoryRequest {
                    reporter = named
                    warnings = await control.warnings(after: accessoryRequest)
                }
                return (reply(ControlWire.AccessoryResult(configuration.map { ControlWire.Accessory(accessoryRequest.identity, $0) }, warnings: warnings)), saved)
            case .failure(let error):
                return (refusal(error), nil)
            }
        case .current(let identity):
            switch await control.current(identity) {
            case .success(let configuration):
                return (reply(ControlWire.AccessoryResult(
                    ControlWire.Accessory(identity, configuration), reporter: await control.reporter(of: identity),
                    driver: await control.driver(of: identity))), nil)
            case .failure(var error):
                // A headset a driver reads but nobody registered (a Sony set that reports no
                // wear): say what the driver knows, and that a reporter can register it.
                if let driver = await control.driver(of: identity) { error.message += "; a built-in driver reads it: " + StatusText.driver(driver) }
                return (refusal(error), nil)
            }
        case .list(let after, let limit):
            let accessories = ControlWire.ListedAccessory.sorted(await control.list())
            return (reply(Self.page(accessories, after: after, limit: limit)), nil)
        case .status:
            var status = await control.status()
            status.diagnostics?.control = socketCounts()
            return (reply(ControlWire.StatusResult(status)), nil)
        case .subscribe, .record:
            preconditionFailure("subscribe and record are answered by serve, which must order the reply before what streams")
        }
    }

    /// One page of `list`: the entries after `after`, at most `limit` (and the protocol's page
    /// limits), and where the next page starts.
    static func page(_ sorted: [ControlWire.ListedAccessory], after: AccessoryIdentity?, limit: Int?) -> ControlWire.ListResult {
        let start = after.map { after in sorted.firstIndex { $0.identity.map { $0 > after } ?? true } ?? sorted.endIndex } ?? sorted.startIndex
        let most = min(limit ?? ControlWire.listPageLimit, ControlWire.listPageLimit)
        var entries: [ControlWire.ListedAccessory] = []
        var bytes = 0
        var index = start
        while index < sorted.endIndex, entries.count < most {
            let entry = sorted[index]
            let size = ControlWire.line(entry).count
            if !entries.isEmpty, bytes + size > ControlWire.listPageBytes { break }
            entries.append(entry)
            bytes += size
            index += 1
        }
        let next = index < sorted.endIndex ? sorted[index - 1].accessory.accessory : nil
        return ControlWire.ListResult(entries, next: next)
    }

    /// Writes each event of `events` to the client until the stream ends. A subscriber that
    /// does not read is cut off once the events it has not taken pass `maximumPendingEventBytes`
    /// (a large reply it asked for meanwhile does not count: `maximumPendingOutputBytes` bounds
    /// everything).
    private func forward(_ lines: AsyncStream<[UInt8]>) {
        let connection = connection
        let cap = limits.maximumPendingEventBytes
        run {
            for await line in lines {
                guard connection.unsentEventBytes + line.count <= cap else {
                    connection.close()
                    return
                }
                connection.send(line, event: true)
            }
            // The daemon ended the stream (it is stopping): tell the subscriber by closing.
            if !Task.isCancelled { connection.close() }
        }
    }

    private func startRecording(_ recording: InputRecording) {
        let connection = connection
        run {
            for await line in recording.lines {
                connection.send(ControlWire.line(ControlWire.RecordLine(line)))
            }
            // The daemon stopped, or the reader fell too far behind: closing ends the recording.
            if !Task.isCancelled { connection.close() }
        }
    }

    private func write(_ value: some Encodable) {
        write(line: ControlWire.line(value))
    }

    private func write(line: Data) {
        connection.send(line)
    }
}

/// A process-wide count that orders what the control connections do (admissions, answered
/// requests) as it happens, whatever event loop or task it happens on: "idle the longest" is
/// the smallest number.
enum ControlActivity {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}
