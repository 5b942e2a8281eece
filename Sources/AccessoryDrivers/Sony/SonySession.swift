import RoutingPolicy

/// Sony's MDR protocol for one connected set: stream bytes in, outputs out, no I/O.
///
/// The owner connects RFCOMM to the set's service (`AccessoryFamily.sony`), writes what
/// `start()` returns, hands every chunk it reads to `receive(bytes:)`, however the stream was
/// cut, and calls `timeout(generation:)` when `deadline` says so (unless the generation changed
/// meanwhile).
///
/// Start-up: the handshake `00 00` (sent every 2 s, 3 times, then `.reconnect`); its reply tells
/// v1 from v2; the support functions (table 1, and table 2 where enabled) decide the battery
/// requests and the wear method; on v2 the operation log is enabled (`c4 01 00`), then wear is
/// read. Every data frame is ACKed at once; one command is outstanding at a time (a 1 s ACK
/// wait, two resends, then dropped). A set whose wear cannot be read says so
/// (`.wearSupport(.notReported)`) and is still read for its battery; a placement is never
/// invented.
public struct SonySession: Sendable {
    public let form: SonyForm
    public let rule: WearRule
    public internal(set) var counters = DriverCounters()

    /// Where start-up stands.
    public enum Stage: Sendable, Hashable {
        /// `start()` not called: frames are only read (and ACKed).
        case notStarted
        case handshaking
        case readingSupportFunctions
        case running
        /// The handshake went unanswered; the owner was asked to reconnect.
        case gaveUp
    }

    public internal(set) var stage: Stage = .notStarted
    /// From the handshake's reply; nil until it came.
    public internal(set) var version: SonyProtocolVersion?
    /// How wear is read, once the support functions decided; nil on v1 (no known message).
    public internal(set) var wearMethod: SonyWearMethod?
    /// The last decoded wear state, left first (headphones: the cups).
    public internal(set) var sides: BudPair?

    /// Between handshakes while none is answered.
    public static let handshakeWait: Duration = .seconds(2)
    /// Handshakes sent before giving up on the channel.
    public static let handshakeSends = 3
    /// For a command's ACK.
    public static let ackWait: Duration = .seconds(1)
    /// For the support-function list after its request was ACKed; then defaults apply.
    public static let supportWait: Duration = .seconds(2)
    /// For the wear status after its request was ACKed; then the set reports no wear.
    public static let wearAnswerWait: Duration = .seconds(3)

    var reader = SonyFrameReader()
    var queue = SonyCommandQueue(nextSeq: 0)
    var notes = NoteOnce()
    var placementFilter = ChangeFilter<Placement>()
    var batteryFilter = ChangeFilter<BatteryReport>()
    var batteryReport = BatteryReport()
    var wearSupportFilter = ChangeFilter<WearSupport>()
    var handshakesSent = 0
    var handshakeAckSeq: UInt8?
    var table2Enabled = false
    var functions: [SonyFrame.Kind: Set<UInt8>] = [:]
    /// The answer awaited after an ACK, with its own deadline.
    var awaiting: Answer?
    var awaitingSerial = 0
    /// A wear request went out and no wear status came since.
    var wearStatusDue = false
    /// A log push asked for a read while one was pending: one more read after it (bounded).
    var wearRereadWanted = false

    enum Answer: Sendable, Hashable {
        case supportFunctions(SonyFrame.Kind)
        case wear
    }

    /// What the owner's timer waits for; a new value is a new generation.
    enum Timer: Sendable, Hashable {
        case handshake(send: Int)
        case ack(send: Int)
        case answer(Answer, serial: Int)
    }

    var timer: Timer?
    var generation = 0

    public init(form: SonyForm, rule: WearRule = .either) {
        self.form = form
        self.rule = rule
    }

    /// Unstuffed bytes held for a frame not yet ended (never above `DriverLimits.maxSonyFrameBytes`).
    public var bufferedByteCount: Int { reader.bufferedCount }

    /// The handshake, to write once the channel is open.
    public mutating func start() -> [DriverOutput] {
        guard stage == .notStarted else { return [] }
        stage = .handshaking
        defer { rearm() }
        return sendHandshake()
    }

    /// Any chunk of the stream: part of a frame, several frames, garbage.
    public mutating func receive(bytes: [UInt8]) -> [DriverOutput] {
        let skippedBefore = counters.skippedBytes
        var outputs: [DriverOutput] = []
        for item in reader.read(bytes, counters: &counters) {
            switch item {
            case let .frame(frame): outputs += handle(frame)
            case let .damaged(damage): outputs += noted(key: Self.damageKey(damage), "Sony: dropped a frame: \(damage) (counted from now on, not logged)")
            }
        }
        if counters.skippedBytes > skippedBefore {
            outputs += noted(key: 0x3_0000, "Sony: skipped bytes outside any frame (counted from now on, not logged)")
        }
        rearm()
        return outputs
    }

    /// When the owner must call `timeout(generation:)`: the handshake, a command's ACK, or an
    /// answer after its ACK. Nil when nothing is awaited.
    public var deadline: (generation: Int, after: Duration)? {
        switch timer {
        case .handshake: (generation, Self.handshakeWait)
        case .ack: (generation, Self.ackWait)
        case .answer(.supportFunctions, _): (generation, Self.supportWait)
        case .answer(.wear, _): (generation, Self.wearAnswerWait)
        case nil: nil
        }
    }

    /// The deadline of `generation` passed; one of an older generation does nothing.
    public mutating func timeout(generation expired: Int) -> [DriverOutput] {
        guard expired == generation, let timer else { return [] }
        var outputs: [DriverOutput]
        switch timer {
        case .handshake:
            if handshakesSent < Self.handshakeSends {
                outputs = sendHandshake()
            } else {
                stage = .gaveUp
                outputs = [.reconnect("no answer to the MDR handshake")]
            }
        case .ack:
            outputs = ackExpired()
        case let .answer(answer, _):
            awaiting = nil
            switch answer {
            case let .supportFunctions(table) where stage == .readingSupportFunctions && functions[table] == nil:
                outputs = noted(key: 0x3_0001, "Sony: no support-function list within \(Self.supportWait); going on with what the form implies")
                outputs += supportFunctionsRead(table, ids: [])
            case .supportFunctions:
                outputs = []
            case .wear:
                outputs = wearUnanswered(acknowledged: true)
            }
        }
        rearm()
        return outputs
    }

    // MARK: - Frames

    private mutating func handle(_ frame: SonyFrame) -> [DriverOutput] {
        var outputs: [DriverOutput] = []
        // Every data frame is ACKed, whatever it says (an ACK is never ACKed); until then the
        // set sends it again.
        if frame.kind == .table1 || frame.kind == .table2 { outputs.append(.send(SonyFrame.ack(of: frame.seq))) }
        switch SonyMessage.decode(frame, version: version ?? .v2) {
        case let .ack(seq):
            outputs += acknowledged(seq: seq)
        case let .protocolInfo(version, table2Enabled):
            guard stage == .handshaking else {
                counters.ignored += 1
                break
            }
            counters.decoded += 1
            outputs += protocolInfoRead(version, table2Enabled: table2Enabled)
        case let .supportFunctions(table, ids):
            guard stage == .readingSupportFunctions, functions[table] == nil else {
                counters.ignored += 1
                break
            }
            counters.decoded += 1
            if awaiting == .supportFunctions(table) { awaiting = nil }
            outputs += supportFunctionsRead(table, ids: ids)
        case let .battery(reading):
            counters.decoded += 1
            counters.unknownValues += reading.unknownValues
            let report = reading.applied(to: batteryReport)
            batteryReport = report
            // An emptied report is said too (no level any more): the daemon would keep the last one.
            if let changed = batteryFilter.changed(report) { outputs.append(.battery(changed)) }
        case let .wear(reading):
            counters.decoded += 1
            outputs += wearRead(reading)
        case let .log(mentionsWear):
            guard mentionsWear, wearMethod != nil else {
                counters.ignored += 1
                break
            }
            counters.decoded += 1
            outputs += requestWear()
        case .ignored:
            counters.ignored += 1
        case let .unknown(opcode):
            counters.unknownOpcodes += 1
            outputs += noted(key: Int(frame.type) << 8 | Int(opcode), "Sony: skipping opcode \(hex(opcode)) on \(Self.tableName(frame.type)) (counted from now on, not logged)")
        case let .malformed(why, key):
            counters.malformed += 1
            outputs += noted(key: 0x1_0000 + key, "Sony: dropped a frame: \(why) (counted from now on, not logged)")
        }
        return outputs
    }

    private mutating func acknowledged(seq: UInt8) -> [DriverOutput] {
        if stage == .handshaking, handshakeAckSeq == nil, seq == SonyFrame.otherSeq(0) {
            counters.decoded += 1
            handshakeAckSeq = seq
            return []
        }
        guard let (command, next) = queue.acknowledged(seq: seq) else {
            counters.ignored += 1
            return noted(key: 0x3_0002, "Sony: ignoring ACKs that match no command (counted from now on, not logged)")
        }
        counters.decoded += 1
        var outputs: [DriverOutput] = next.map { [.send($0)] } ?? []
        switch command.purpose {
        case let .supportFunctions(table) where stage == .readingSupportFunctions && functions[table] == nil:
            awaitAnswer(.supportFunctions(table))
        case .wear where wearStatusDue:
            awaitAnswer(.wear)
        case .wear:
            // Its answer (or a push) came before the ACK.
            outputs += rereadIfWanted()
        default:
            break
        }
        return outputs
    }

    private mutating func awaitAnswer(_ answer: Answer) {
        awaiting = answer
        awaitingSerial += 1
    }

    /// A command's ACK did not come: send it again, or drop it and go on as if it went unanswered.
    private mutating func ackExpired() -> [DriverOutput] {
        switch queue.expired() {
        case let .resend(bytes)?:
            return [.send(bytes)]
        case let .dropped(command, next)?:
            var outputs = noted(key: 0x3_0003, "Sony: a command got no ACK after \(SonyCommandQueue.maximumSends) sends; dropped, going on (counted from now on, not logged)")
            outputs += next.map { [.send($0)] } ?? []
            switch command.purpose {
            case let .supportFunctions(table) where stage == .readingSupportFunctions && functions[table] == nil:
                outputs += supportFunctionsRead(table, ids: [])
            case .wear where wearStatusDue:
                outputs += wearUnanswered(acknowledged: false)
            case .wear:
                outputs += rereadIfWanted()
            default:
                break
            }
            return outputs
        case nil:
            return []
        }
    }

    /// Points the owner's timer at what is awaited now; a change is a new generation.
    private mutating func rearm() {
        let wanted: Timer? =
            if stage == .handshaking {
                .handshake(send: handshakesSent)
            } else if queue.outstanding != nil {
                .ack(send: queue.sendSerial)
            } else if let awaiting {
                .answer(awaiting, serial: awaitingSerial)
            } else {
                nil
            }
        if wanted != timer {
            timer = wanted
            generation += 1
        }
    }

    mutating func noted(key: Int, _ text: @autoclosure () -> String) -> [DriverOutput] {
        notes.note(key: key, text()).map { [$0] } ?? []
    }

    private static func damageKey(_ damage: SonyFrameReader.Damage) -> Int {
        switch damage {
        case .badChecksum: 0x2_0000
        case .badLength, .tooShort, .cutShort, .noEndMarker: 0x2_0001
        case .badEscape: 0x2_0002
        case .oversized: 0x2_0003
        }
    }

    static func tableName(_ type: UInt8) -> String {
        type == SonyFrame.Kind.table2.rawValue ? "table 2" : "table 1"
    }
}
