import RoutingPolicy
@testable import AccessoryDrivers

/// Hex text (`3e 0c 00 ...` or `3e0c00...`) to bytes; test vectors are quoted as their sources print them.
func sonyBytes(_ text: String) -> [UInt8] {
    let digits = text.filter(\.isHexDigit)
    return stride(from: 0, to: digits.count, by: 2).map { offset in
        let start = digits.index(digits.startIndex, offsetBy: offset)
        return UInt8(digits[start...digits.index(after: start)], radix: 16)!
    }
}

func sonyFrame(_ kind: SonyFrame.Kind, seq: UInt8, _ payload: [UInt8]) -> [UInt8] {
    SonyFrame.encode(kind, seq: seq, payload: payload)
}

func sonyAck(_ seq: UInt8) -> [UInt8] { SonyFrame.encode(.ack, seq: seq, payload: []) }

/// The frames in `bytes`, for reading what a session sent.
func sonyFrames(_ bytes: [UInt8]) -> [SonyFrame] {
    var reader = SonyFrameReader()
    var counters = DriverCounters()
    return reader.read(bytes, counters: &counters).compactMap {
        if case let .frame(frame) = $0 { return frame }
        return nil
    }
}

extension [DriverOutput] {
    var sent: [[UInt8]] { compactMap { if case let .send(bytes) = $0 { bytes } else { nil } } }
    /// The payloads of the commands (not ACKs) sent.
    var commands: [[UInt8]] { sent.flatMap(sonyFrames).filter { $0.type != 0x01 }.map(\.payload) }
    var acks: [SonyFrame] { sent.flatMap(sonyFrames).filter { $0.type == 0x01 } }
    var placements: [Placement] { compactMap { if case let .placement(placement) = $0 { placement } else { nil } } }
    var batteries: [BatteryReport] { compactMap { if case let .battery(report) = $0 { report } else { nil } } }
    var wearSupports: [WearSupport] { compactMap { if case let .wearSupport(support) = $0 { support } else { nil } } }
    var notes: [String] { compactMap { if case let .note(text) = $0 { text } else { nil } } }
}

/// A set that ACKs every command (the other sequence number) and answers from a table keyed by
/// the request's table and payload; anything else only gets its ACK.
struct ScriptedSony {
    var answers: [String: [[UInt8]]]
    /// Requests seen, in order (resends included).
    var requests: [(SonyFrame.Kind, [UInt8])] = []
    var seq: UInt8 = 0
    /// Requests left unACKed (and unanswered), by payload.
    var silent: Set<[UInt8]> = []

    static func key(_ kind: SonyFrame.Kind, _ payload: [UInt8]) -> String { "\(kind.rawValue) \(payload)" }

    init(_ answers: [(SonyFrame.Kind, [UInt8], [UInt8])]) {
        var table: [String: [[UInt8]]] = [:]
        for (kind, request, answer) in answers { table[Self.key(kind, request), default: []].append(answer) }
        self.answers = table
    }

    mutating func respond(to bytes: [UInt8]) -> [UInt8] {
        var reply: [UInt8] = []
        for frame in sonyFrames(bytes) where frame.type != 0x01 {
            guard let kind = frame.kind else { continue }
            requests.append((kind, frame.payload))
            if silent.contains(frame.payload) { continue }
            reply += sonyAck(SonyFrame.otherSeq(frame.seq))
            for answer in answers[Self.key(kind, frame.payload)] ?? [] {
                reply += sonyFrame(kind, seq: seq, answer)
                seq = SonyFrame.otherSeq(seq)
            }
        }
        return reply
    }

    /// Feeds `outputs`' sends to the set and its replies back until the session sends nothing
    /// more; every output on the way.
    mutating func converse(_ session: inout SonySession, from outputs: [DriverOutput]) -> [DriverOutput] {
        var all = outputs
        var pending = outputs
        for _ in 0..<64 {
            let reply = pending.sent.map { respond(to: $0) }.reduce([], +)
            if reply.isEmpty { break }
            pending = session.receive(bytes: reply)
            all += pending
        }
        return all
    }
}

enum SonyVectors {
    /// WH-CH720N, btmon (omarchy-headphones `docs/captures/sony-wh-ch720n.txt`, copy in
    /// kevinbsr/omarchy-soundcore-q30 at f8696fb4f29b303468080f7272361157da6747e7).
    static let handshake = sonyBytes("3e 0c 00 00 00 00 02 00 00 0e 3c")
    static let ch720nProtocolInfo = sonyBytes("3e 0c 00 00 00 00 08 01 00 03 00 10 02 00 00 2a 3c")
    /// v2 reply payloads: WH-CH720N (table 2 enabled), and one with table 2 disabled.
    static let v2Info: [UInt8] = [0x01, 0x00, 0x03, 0x00, 0x10, 0x02, 0x00, 0x00]
    static let v2InfoNoTable2: [UInt8] = [0x01, 0x00, 0x03, 0x00, 0x10, 0x02, 0x00, 0x01]
    /// WH-1000XM4 (omarchy-headphones `PROTOCOL.md` at c05b4698238b840366f6f00bd57daad804707e2f).
    static let v1Info: [UInt8] = [0x01, 0x00, 0x70, 0x00]

    static func support(_ ids: [UInt8]) -> [UInt8] {
        [0x07, 0x00, UInt8(ids.count)] + ids.flatMap { [$0, 0x00] }
    }
}
