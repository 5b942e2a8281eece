import RoutingPolicy

/// Cuts a Sony MDR stream into frames and decodes each on its own, for tools that show a
/// capture (`earshot driver decode`). It uses the session's frame reader and message layouts
/// (`SonyMessage`), so it classifies every frame as `SonySession` does; unlike the session it
/// reports every frame, repeated states included, sends nothing and keeps only the protocol
/// version, which handshake replies decide (v2 until one says otherwise).
public struct SonyDecoder: Sendable {
    public let form: SonyForm
    public private(set) var version: SonyProtocolVersion = .v2
    private var reader = SonyFrameReader()
    private var counters = DriverCounters()

    public init(form: SonyForm) {
        self.form = form
    }

    /// Unstuffed bytes held for a frame not yet ended (never above `DriverLimits.maxSonyFrameBytes`).
    public var bufferedByteCount: Int { reader.bufferedCount }

    /// One chunk of the stream: one entry per frame it ends, in order (a damaged frame as
    /// `.malformed` naming the damage), then one `.malformed` when bytes outside any frame were
    /// skipped (the rest of a dropped frame is not counted again).
    public mutating func receive(bytes: [UInt8]) -> [DecodedPacket] {
        let skippedBefore = counters.skippedBytes - reader.damagedTailBytes
        var decoded: [DecodedPacket] = reader.read(bytes, counters: &counters).map { item in
            switch item {
            case let .frame(frame): decode(frame)
            case let .damaged(damage): .malformed(why: damage.description)
            }
        }
        let skipped = counters.skippedBytes - reader.damagedTailBytes - skippedBefore
        if skipped > 0 { decoded.append(.malformed(why: "skipped \(skipped) byte\(skipped == 1 ? "" : "s") outside any frame")) }
        return decoded
    }

    /// The input ended: a frame begun and not ended (no 3C) as `.malformed`, else nil.
    public mutating func finish() -> DecodedPacket? {
        reader.endOfInput(counters: &counters).map { .malformed(why: $0.description) }
    }

    private mutating func decode(_ frame: SonyFrame) -> DecodedPacket {
        switch SonyMessage.decode(frame, version: version) {
        case let .ack(seq):
            return .ack(seq: seq)
        case let .protocolInfo(version, _):
            self.version = version
            return .protocolInfo(version: version.rawValue)
        case let .supportFunctions(table, ids):
            return .supportFunctions(table: table == .table2 ? 2 : 1, functions: ids)
        case let .battery(reading):
            return .battery(reading.slots.compactMap { slot in
                slot.level.map { level in
                    let status: BatteryComponent.Status =
                        switch level.isCharging {
                        case true?: .charging
                        case false?: .discharging
                        case nil: .unknown
                        }
                    return BatteryComponent(kind: Self.componentKind(slot.part), level: level.percent, status: status)
                }
            })
        case let .wear(reading):
            // Headphones' cups are named only where the message names them (table-2 codes).
            let namesSides: Bool =
                switch reading {
                case .table1: form == .earbuds
                case .table2: true
                }
            return .wear(placement: reading.placement(form: form, rule: .either), sides: namesSides ? reading.sides : nil)
        case .log:
            return .ignored(opcode: UInt16(frame.payload[0]))
        case let .ignored(opcode):
            return .ignored(opcode: UInt16(opcode))
        case let .unknown(opcode):
            return .unknown(opcode: UInt16(opcode))
        case let .malformed(why, _):
            return .malformed(why: why)
        }
    }

    private static func componentKind(_ part: SonyBatteryReading.Part) -> BatteryComponent.Kind {
        switch part {
        case .headset: .headphone
        case .left: .left
        case .right: .right
        case .chargingCase: .chargingCase
        }
    }
}
