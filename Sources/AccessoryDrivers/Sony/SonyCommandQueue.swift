/// MDR's one-command-at-a-time rule: a command goes out when its predecessor is ACKed, with the
/// sequence number that ACK carried; one not ACKed in time is sent again (same bytes) and, after
/// `maximumSends`, dropped so the rest can go on. ACKs that match nothing change nothing and
/// send nothing (an ACK storm costs a counter each).
struct SonyCommandQueue: Sendable {
    /// What a command is for: the session's next step depends on it.
    enum Purpose: Sendable, Hashable {
        case supportFunctions(SonyFrame.Kind)
        case battery
        case enableLog
        case wear
    }

    struct Command: Sendable, Hashable {
        var table: SonyFrame.Kind
        var payload: [UInt8]
        var purpose: Purpose
    }

    struct Outstanding: Sendable, Hashable {
        var command: Command
        var seq: UInt8
        var bytes: [UInt8]
        var sends: Int
    }

    enum Expiry: Sendable, Hashable {
        /// Send these bytes again (the same frame).
        case resend([UInt8])
        /// Given up on `command`; `next` (if any) is the next command's frame.
        case dropped(Command, next: [UInt8]?)
    }

    /// Sends of one command (the first and two more) before it is dropped.
    static let maximumSends = 3

    private(set) var outstanding: Outstanding?
    private var waiting: [Command] = []
    private var nextSeq: UInt8
    /// Bumped at every send (resends too): a deadline per send.
    private(set) var sendSerial = 0

    init(nextSeq: UInt8) {
        self.nextSeq = nextSeq
    }

    var isEmpty: Bool { outstanding == nil && waiting.isEmpty }

    func holds(_ purpose: Purpose) -> Bool {
        outstanding?.command.purpose == purpose || waiting.contains { $0.purpose == purpose }
    }

    /// The frame to send now when nothing is outstanding; nil when it waits, or when the queue
    /// is full (`accepted` false: the command was dropped).
    mutating func enqueue(_ command: Command) -> (frame: [UInt8]?, accepted: Bool) {
        guard outstanding != nil else { return (send(command), true) }
        guard waiting.count < DriverLimits.maxSonyQueuedCommands else { return (nil, false) }
        waiting.append(command)
        return (nil, true)
    }

    /// An ACK: the command it acknowledges and the next command's frame, or nil for an ACK that
    /// matches no outstanding command (none outstanding, or not the other sequence number).
    mutating func acknowledged(seq: UInt8) -> (command: Command, next: [UInt8]?)? {
        guard let current = outstanding, seq == SonyFrame.otherSeq(current.seq) else { return nil }
        nextSeq = seq
        outstanding = nil
        return (current.command, sendNext())
    }

    /// The outstanding command's ACK did not come in time.
    mutating func expired() -> Expiry? {
        guard var current = outstanding else { return nil }
        if current.sends < Self.maximumSends {
            current.sends += 1
            outstanding = current
            sendSerial += 1
            return .resend(current.bytes)
        }
        // The next command keeps the seq of the last ACK received, as omarchy's bridge (which
        // drops and moves on) and Gadgetbridge do: no ACK came, so nothing moves it.
        outstanding = nil
        return .dropped(current.command, next: sendNext())
    }

    private mutating func sendNext() -> [UInt8]? {
        guard !waiting.isEmpty else { return nil }
        return send(waiting.removeFirst())
    }

    private mutating func send(_ command: Command) -> [UInt8] {
        let bytes = SonyFrame.encode(command.table, seq: nextSeq, payload: command.payload)
        outstanding = Outstanding(command: command, seq: nextSeq, bytes: bytes, sends: 1)
        sendSerial += 1
        return bytes
    }
}
