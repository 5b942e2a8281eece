import RoutingPolicy

/// The AAP protocol for one connected AirPods / Beats headset: bytes in, outputs out, no I/O.
///
/// The owner opens the L2CAP channel (PSM 0x1001, SEQPACKET), writes what `start()` returns,
/// then hands every packet it reads to `receive(packet:)` and acts on the outputs; when
/// `deadline` names one, it calls `timeout()` once that much time has passed without the
/// deadline's generation changing.
///
/// Start-up runs as the public clients do it: the handshake, then (once the headset replied, or
/// a second passed) the feature flags, then (once acknowledged, or a second passed) the
/// notification request, sent again with backoff (2, 4, 8, 16 s) while no battery or ear packet
/// has come; after the fifth request a silent session asks to be reconnected.
public struct AAPSession: Sendable {
    public let rule: WearRule
    public private(set) var counters = DriverCounters()

    /// Where start-up stands.
    public enum Stage: Sendable, Hashable {
        /// `start()` not called: packets are only decoded (tests, tools).
        case notStarted
        case awaitingReply, awaitingFeaturesAck, awaitingNotifications, running
    }

    public private(set) var stage: Stage = .notStarted
    /// How many notification requests were sent.
    public private(set) var requestsSent = 0
    /// Bumped at every change of stage or request: a deadline of an older generation is stale.
    private var generation = 0

    /// How long to wait for the handshake reply and for the feature flags' acknowledgement.
    public static let replyDeadline: Duration = .seconds(1)
    /// The first wait for a battery or ear packet after a notification request; doubles.
    public static let firstRequestWait: Duration = .seconds(2)
    /// Requests sent before a silent session gives up (and asks to be reconnected).
    public static let maximumRequests = 5
    /// The last decoded wear state (primary bud first), if any.
    public private(set) var buds: BudPair?

    private var placement = ChangeFilter<Placement>()
    private var battery = ChangeFilter<BatteryReport>()
    private var audioSource = ChangeFilter<AudioSource>()
    private var notes = NoteOnce()

    public init(rule: WearRule = .either) {
        self.rule = rule
    }

    /// The handshake; the rest of start-up follows the headset's replies (or `timeout()`).
    public mutating func start() -> [DriverOutput] {
        advance(to: .awaitingReply)
        return [.send(AAPPacket.handshake)]
    }

    /// When the owner must call `timeout()`: after `after`, unless the generation changed by
    /// then (a reply came, or another request went out). Nil once running.
    public var deadline: (generation: Int, after: Duration)? {
        switch stage {
        case .awaitingReply, .awaitingFeaturesAck: return (generation, Self.replyDeadline)
        case .awaitingNotifications:
            let wait = Self.firstRequestWait * (1 << min(max(requestsSent - 1, 0), 4))
            return (generation, wait)
        case .running, .notStarted: return nil
        }
    }

    /// The deadline of `generation` passed: go on without the reply, ask again, or give up.
    public mutating func timeout(generation expired: Int) -> [DriverOutput] {
        guard expired == generation else { return [] }
        switch stage {
        case .awaitingReply:
            return noted(key: 0x3_0000, "AAP: no reply to the handshake within a second; going on") + sendFeatures()
        case .awaitingFeaturesAck:
            return requestNotifications()
        case .awaitingNotifications:
            guard requestsSent < Self.maximumRequests else {
                advance(to: .awaitingNotifications)
                return [.reconnect("AAP: no battery or ear packet after \(requestsSent) notification requests; connecting again")]
            }
            return noted(key: 0x3_0001, "AAP: no battery or ear packet yet; asking again (with backoff)") + requestNotifications()
        case .running, .notStarted:
            return []
        }
    }

    private mutating func advance(to next: Stage) {
        stage = next
        generation += 1
    }

    private mutating func sendFeatures() -> [DriverOutput] {
        advance(to: .awaitingFeaturesAck)
        return [.send(AAPPacket.setFeatures)]
    }

    private mutating func requestNotifications() -> [DriverOutput] {
        requestsSent += 1
        advance(to: .awaitingNotifications)
        return [.send(AAPPacket.requestNotifications)]
    }

    /// Start-up's part of a packet: the handshake reply (any packet without the message header,
    /// or the first message: the headset is talking), the features' acknowledgement, the first
    /// battery or ear packet.
    private mutating func followStartUp(_ packet: [UInt8], opcode: UInt16?) -> [DriverOutput] {
        switch stage {
        case .awaitingReply:
            var outputs = sendFeatures()
            if opcode == AAPPacket.Opcode.setFeatures { outputs += requestNotifications() }
            return outputs
        case .awaitingFeaturesAck where opcode != nil:
            return requestNotifications()
        case .awaitingNotifications where opcode == AAPPacket.Opcode.earDetection || opcode == AAPPacket.Opcode.battery:
            advance(to: .running)
            return []
        default:
            return []
        }
    }

    /// One packet as read from the channel.
    public mutating func receive(packet: [UInt8]) -> [DriverOutput] {
        let isMessage = packet.count >= 6 && packet.count <= DriverLimits.maxAAPPacketBytes && packet.starts(with: AAPPacket.messageHeader)
        let startUp = stage == .running || stage == .notStarted ? [] : followStartUp(packet, opcode: isMessage ? UInt16(packet[4]) | UInt16(packet[5]) << 8 : nil)
        return decode(packet) + startUp
    }

    private mutating func decode(_ packet: [UInt8]) -> [DriverOutput] {
        counters.packets += 1
        guard packet.count <= DriverLimits.maxAAPPacketBytes else {
            counters.oversized += 1
            return noted(key: 0x1_0000, "AAP: dropped a \(packet.count)-byte packet (cap \(DriverLimits.maxAAPPacketBytes))")
        }
        guard packet.count >= 4 else {
            counters.malformed += 1
            return noted(key: 0x1_0001, "AAP: dropped a \(packet.count)-byte packet (shorter than a header)")
        }
        guard packet.starts(with: AAPPacket.messageHeader) else {
            // The handshake's reply and other link-level packets: expected, not ours to read.
            counters.ignored += 1
            return []
        }
        guard packet.count >= 6 else {
            counters.malformed += 1
            return noted(key: 0x1_0001, "AAP: dropped a message without an opcode")
        }
        let opcode = UInt16(packet[4]) | UInt16(packet[5]) << 8
        switch opcode {
        case AAPPacket.Opcode.earDetection: return receiveEarDetection(packet)
        case AAPPacket.Opcode.battery: return receiveBattery(packet)
        case AAPPacket.Opcode.audioSource: return receiveAudioSource(packet)
        default:
            if AAPPacket.Opcode.knownButUnused.contains(opcode) || opcode == AAPPacket.Opcode.setFeatures {
                counters.ignored += 1
                return []
            }
            counters.unknownOpcodes += 1
            return noted(key: Int(opcode), "AAP: skipping unknown opcode \(hex(opcode, width: 4)) (counted from now on, not logged)")
        }
    }

    // MARK: - Messages

    /// `04 00 04 00 06 00 <primary> <secondary>`.
    private mutating func receiveEarDetection(_ packet: [UInt8]) -> [DriverOutput] {
        guard packet.count >= 8 else { return malformed("ear detection", packet) }
        counters.decoded += 1
        let pair = BudPair(budState(packet[6]), budState(packet[7]))
        buds = pair
        guard let worn = pair.placement(rule: rule) else { return [] }
        return placement.changed(worn).map { [.placement($0)] } ?? []
    }

    private mutating func budState(_ byte: UInt8) -> BudState {
        if let code = AAPPacket.EarCode(rawValue: byte) { return code.budState }
        counters.unknownValues += 1
        return .unrecognized
    }

    /// `04 00 04 00 04 00 <count> (<kind> 01 <level> <status> 01) × count`.
    private mutating func receiveBattery(_ packet: [UInt8]) -> [DriverOutput] {
        guard packet.count >= 7 else { return malformed("battery", packet) }
        let count = Int(packet[6])
        guard count <= DriverLimits.maxAAPBatteryComponents, packet.count >= 7 + 5 * count else {
            return malformed("battery", packet)
        }
        counters.decoded += 1
        var report = BatteryReport()
        for index in 0..<count {
            let at = 7 + 5 * index
            guard let level = batteryLevel(level: packet[at + 2], status: packet[at + 3]) else { continue }
            switch AAPPacket.BatteryKind(rawValue: packet[at]) {
            case .left: report.left = level
            case .right: report.right = level
            case .chargingCase: report.chargingCase = level
            case .headset: report.headset = level
            case nil: counters.unknownValues += 1
            }
        }
        guard !report.isEmpty else { return [] }
        return battery.changed(report).map { [.battery($0)] } ?? []
    }

    /// nil for an absent component (level 0xFF, status "disconnected") or an impossible level.
    private mutating func batteryLevel(level: UInt8, status: UInt8) -> BatteryLevel? {
        if level == 0xFF { return nil }
        guard level <= 100 else {
            counters.unknownValues += 1
            return nil
        }
        switch AAPPacket.BatteryStatus(rawValue: status) {
        case .disconnected: return nil
        case .charging, .chargingInCase: return BatteryLevel(percent: Int(level), isCharging: true)
        case .discharging: return BatteryLevel(percent: Int(level), isCharging: false)
        case .unknown: return BatteryLevel(percent: Int(level), isCharging: nil)
        case nil:
            counters.unknownValues += 1
            return BatteryLevel(percent: Int(level), isCharging: nil)
        }
    }

    /// `04 00 04 00 0E 00 <address, 6 bytes least significant first> <activity>`.
    private mutating func receiveAudioSource(_ packet: [UInt8]) -> [DriverOutput] {
        guard packet.count >= 13 else { return malformed("audio source", packet) }
        counters.decoded += 1
        let activity = AudioSourceActivity(rawValue: packet[12])
        if activity == nil { counters.unknownValues += 1 }
        let source = AudioSource(address: BluetoothAddress(littleEndian: packet[6..<12]), activity: activity)
        return audioSource.changed(source).map { [.audioSource($0)] } ?? []
    }

    // MARK: - Skips

    private mutating func malformed(_ what: String, _ packet: [UInt8]) -> [DriverOutput] {
        counters.malformed += 1
        return noted(key: 0x2_0000 + Int(packet[4]), "AAP: dropped a truncated \(what) packet (\(packet.count) bytes)")
    }

    private mutating func noted(key: Int, _ text: String) -> [DriverOutput] {
        notes.note(key: key, text).map { [$0] } ?? []
    }
}
