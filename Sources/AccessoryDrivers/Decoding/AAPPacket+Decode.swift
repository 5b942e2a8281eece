import RoutingPolicy

extension AAPPacket {
    /// One packet as read from the channel, on its own: the same checks, in the same order, as
    /// `AAPSession.receive(packet:)` (cap, header, opcode, per-message length), without the
    /// session's change filter. A test holds the two to the same classification.
    public static func decode(_ packet: [UInt8]) -> DecodedPacket {
        guard packet.count <= DriverLimits.maxAAPPacketBytes else {
            return .malformed(why: "\(packet.count)-byte packet over the \(DriverLimits.maxAAPPacketBytes)-byte cap")
        }
        guard packet.count >= 4 else { return .malformed(why: "\(packet.count)-byte packet, shorter than a header") }
        guard packet.starts(with: messageHeader) else { return .ignored(opcode: nil) }
        guard packet.count >= 6 else { return .malformed(why: "message without an opcode") }
        let opcode = UInt16(packet[4]) | UInt16(packet[5]) << 8
        switch opcode {
        case Opcode.earDetection:
            guard packet.count >= 8 else { return truncated("ear detection", packet) }
            return .earDetection(BudPair(budState(packet[6]), budState(packet[7])), components: [])
        case Opcode.battery:
            guard packet.count >= 7 else { return truncated("battery", packet) }
            let count = Int(packet[6])
            guard count <= DriverLimits.maxAAPBatteryComponents, packet.count >= 7 + 5 * count else {
                return truncated("battery", packet)
            }
            return .battery((0..<count).compactMap { index in
                let at = 7 + 5 * index
                return batteryComponent(kind: packet[at], level: packet[at + 2], status: packet[at + 3])
            })
        case Opcode.audioSource:
            guard packet.count >= 13 else { return truncated("audio source", packet) }
            return .audioSource(AudioSource(
                address: BluetoothAddress(littleEndian: packet[6..<12]), activity: AudioSourceActivity(rawValue: packet[12])))
        default:
            return Opcode.knownButUnused.contains(opcode) || opcode == Opcode.setFeatures ? .ignored(opcode: opcode) : .unknown(opcode: opcode)
        }
    }

    private static func truncated(_ what: String, _ packet: [UInt8]) -> DecodedPacket {
        .malformed(why: "truncated \(what) packet (\(packet.count) bytes)")
    }

    private static func budState(_ byte: UInt8) -> BudState {
        EarCode(rawValue: byte)?.budState ?? .unrecognized
    }

    /// nil for a kind no public note explains, or a slot marked absent (level 0xFF): the session
    /// leaves both out too.
    private static func batteryComponent(kind: UInt8, level: UInt8, status: UInt8) -> BatteryComponent? {
        if level == 0xFF { return nil }
        let component: BatteryComponent.Kind
        switch BatteryKind(rawValue: kind) {
        case .left: component = .left
        case .right: component = .right
        case .chargingCase: component = .chargingCase
        case .headset: component = .headphone
        case nil: return nil
        }
        let state: BatteryComponent.Status =
            switch BatteryStatus(rawValue: status) {
            case .charging, .chargingInCase: .charging
            case .discharging: .discharging
            case .disconnected: .disconnected
            case .unknown, nil: .unknown
            }
        return BatteryComponent(kind: component, level: level <= 100 ? Int(level) : nil, status: state)
    }
}
