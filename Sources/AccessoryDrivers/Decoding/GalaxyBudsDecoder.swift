/// Cuts a Galaxy Buds stream into frames and decodes each on its own, for tools that show a
/// capture (`earshot driver decode`). It uses the session's frame reader and status layouts;
/// unlike `GalaxyBudsSession` it reports every frame, repeated states included, and says what
/// it dropped.
public struct GalaxyBudsDecoder: Sendable {
    public let model: GalaxyBudsModel
    private var reader: GalaxyBudsFrameReader
    private var counters = DriverCounters()

    public init(model: GalaxyBudsModel) {
        self.model = model
        reader = GalaxyBudsFrameReader(framing: model.framing)
    }

    /// Bytes held waiting for the rest of a frame (never above `DriverLimits.maxGalaxyBufferedBytes`).
    public var bufferedByteCount: Int { reader.bufferedCount }

    /// One chunk of the stream: one entry per whole frame it completes, in order, then one
    /// `.malformed` per kind of damage met in this chunk (bad CRC, oversized or malformed
    /// frames, bytes outside any frame).
    public mutating func receive(bytes: [UInt8]) -> [DecodedPacket] {
        receiveFrames(bytes: bytes).map(\.packet)
    }

    /// `receive(bytes:)` with each whole frame's header flags (bits no note names; 0 for none
    /// and for the damage entries).
    public mutating func receiveFrames(bytes: [UInt8]) -> [(packet: DecodedPacket, headerFlags: UInt16)] {
        let before = counters
        var decoded: [(packet: DecodedPacket, headerFlags: UInt16)] = reader.read(bytes, counters: &counters).map { (decode($0), $0.headerFlags) }
        let after = counters
        if after.ignored > before.ignored { decoded.append((.ignored(opcode: nil), 0)) }
        let damage: [(Int, String)] = [
            (after.badCRC - before.badCRC, "with a bad CRC"),
            (after.oversized - before.oversized, "with an impossible size"),
            (after.malformed - before.malformed, "with a bad header or end marker"),
        ]
        for (count, what) in damage where count > 0 {
            decoded.append((.malformed(why: "dropped \(count) frame\(count == 1 ? "" : "s") \(what)"), 0))
        }
        let skipped = after.skippedBytes - before.skippedBytes
        if skipped > 0 {
            decoded.append((.malformed(why: "skipped \(skipped) byte\(skipped == 1 ? "" : "s") outside any frame"), 0))
        }
        return decoded
    }

    private func decode(_ frame: GalaxyBudsFrame) -> DecodedPacket {
        guard GalaxyBudsStatus.isStatus(id: frame.id) else { return .unknown(opcode: UInt16(frame.id)) }
        guard let status = GalaxyBudsStatus.decode(id: frame.id, payload: frame.payload, model: model) else {
            return .malformed(why: "status \(hex(frame.id)) too short for \(model.rawValue) (\(frame.payload.count) bytes)")
        }
        var components: [BatteryComponent] = []
        for (kind, level, bud) in [
            (BatteryComponent.Kind.left, status.battery.left, status.buds.first),
            (.right, status.battery.right, status.buds.second),
        ] {
            if bud == .disconnected {
                components.append(BatteryComponent(kind: kind, level: nil, status: .disconnected))
            } else if let level {
                components.append(BatteryComponent(kind: kind, level: level.percent, status: .unknown))
            }
        }
        if let level = status.battery.chargingCase {
            components.append(BatteryComponent(kind: .chargingCase, level: level.percent, status: .unknown))
        }
        return .earDetection(status.buds, components: components)
    }
}
