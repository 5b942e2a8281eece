import WireFields
import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// Golden packets are from librepods' "AAP Definitions.md" (handshake, notification request,
/// ear detection, battery example from AirPods Pro 2) and its Android AACPManager.kt notes
/// (audio source, opcode 0x0E).
struct AAPSessionTests {
    static func bytes(_ hex: String) -> [UInt8] {
        hex.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    @Test func startSendsTheHandshakeAndFollowsTheReplies() {
        var session = AAPSession()
        #expect(session.start() == [.send(Self.bytes("00 00 04 00 01 00 02 00 00 00 00 00 00 00 00 00"))])
        #expect(AAPPacket.psm == 0x1001)
        #expect(session.stage == .awaitingReply && session.deadline?.after == .seconds(1))
        // The handshake's reply (no message header): the feature flags next.
        #expect(session.receive(packet: Self.bytes("01 00 04 00 00 00 01 00 02 00 00 00")) == [.send(Self.bytes("04 00 04 00 4D 00 FF 00 00 00 00 00 00 00"))])
        #expect(session.stage == .awaitingFeaturesAck)
        // Their acknowledgement: the notification request.
        #expect(session.receive(packet: Self.bytes("04 00 04 00 4D 00 FF 00 00 00 00 00 00 00")) == [.send(Self.bytes("04 00 04 00 0F 00 FF FF FF FF"))])
        #expect(session.stage == .awaitingNotifications && session.requestsSent == 1 && session.deadline?.after == .seconds(2))
        // The first ear packet: running, no deadline.
        #expect(session.receive(packet: Self.bytes("04 00 04 00 06 00 00 01")) == [.placement(.inEar)])
        #expect(session.stage == .running && session.deadline == nil)
        #expect(session.counters.isConsistent)
    }

    @Test("a peer that answers nothing: features and the request after a second each; the request again with backoff; then reconnect")
    func silentPeerIsAskedAgainThenReconnected() throws {
        var session = AAPSession()
        _ = session.start()
        var deadline = try #require(session.deadline)
        #expect(session.timeout(generation: deadline.generation).contains(.send(AAPPacket.setFeatures)))
        deadline = try #require(session.deadline)
        #expect(session.timeout(generation: deadline.generation) == [.send(AAPPacket.requestNotifications)])
        var waits: [Duration] = []
        for _ in 0..<4 {
            deadline = try #require(session.deadline)
            waits.append(deadline.after)
            let outputs = session.timeout(generation: deadline.generation)
            #expect(outputs.contains(.send(AAPPacket.requestNotifications)))
            // A stale deadline (an older generation) does nothing.
            #expect(session.timeout(generation: deadline.generation) == [])
        }
        #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(16)])
        #expect(session.requestsSent == 5)
        deadline = try #require(session.deadline)
        let last = session.timeout(generation: deadline.generation)
        #expect(last.count == 1 && { if case .reconnect = last[0] { true } else { false } }())
    }

    @Test("a peer that ignores the first request answers the second: running")
    func secondRequestAnswered() throws {
        var session = AAPSession()
        _ = session.start()
        _ = session.receive(packet: Self.bytes("01 00 04 00 00 00"))
        _ = session.receive(packet: AAPPacket.setFeatures)
        let deadline = try #require(session.deadline)
        #expect(session.timeout(generation: deadline.generation).contains(.send(AAPPacket.requestNotifications)))
        #expect(session.receive(packet: AAPPacket.battery([.init(.left, level: 50, .discharging)])).contains { if case .battery = $0 { true } else { false } })
        #expect(session.stage == .running)
    }

    @Test func goldenEarDetection() {
        var session = AAPSession()
        #expect(session.receive(packet: Self.bytes("04 00 04 00 06 00 00 01")) == [.placement(.inEar)])
        #expect(session.buds == BudPair(.inEar, .outOfEar))
        #expect(session.receive(packet: Self.bytes("04 00 04 00 06 00 01 02")) == [.placement(.offHead)])
        #expect(session.buds == BudPair(.outOfEar, .inCase))
        #expect(session.counters.decoded == 2)
        #expect(AAPPacket.earDetection(primary: .inEar, secondary: .outOfEar) == Self.bytes("04 00 04 00 06 00 00 01"))
    }

    @Test(arguments: WearRule.allCases)
    func everyEarCodeCombination(rule: WearRule) {
        for primary in AAPPacket.EarCode.allCases {
            for secondary in AAPPacket.EarCode.allCases {
                var session = AAPSession(rule: rule)
                let outputs = session.receive(packet: AAPPacket.earDetection(primary: primary, secondary: secondary))
                let pair = BudPair(primary.budState, secondary.budState)
                #expect(outputs == [.placement(pair.placement(rule: rule)!)])
            }
        }
    }

    @Test func placementOnlyOnChange() {
        var session = AAPSession()
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .outOfEar, secondary: .inCase)) == [.placement(.offHead)])
        // Same placement again (different buds): nothing.
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .inCase, secondary: .inCase)) == [])
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .inEar, secondary: .inCase)) == [.placement(.inEar)])
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .inEar, secondary: .inEar)) == [])
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .outOfEar, secondary: .outOfEar)) == [.placement(.offHead)])
    }

    @Test func bothRuleNeedsBothBuds() {
        var session = AAPSession(rule: .both)
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .inEar, secondary: .outOfEar)) == [.placement(.offHead)])
        #expect(session.receive(packet: AAPPacket.earDetection(primary: .inEar, secondary: .inEar)) == [.placement(.inEar)])
    }

    @Test func unknownEarValueIsCountedAndNeverKeepsAStaleWornState() {
        var session = AAPSession()
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x00, secondary: 0x00)) == [.placement(.inEar)])
        // The only known bud is out: the unknown one is not read as in, so "worn" does not stay.
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x07, secondary: 0x01)) == [.placement(.offHead)])
        #expect(session.counters.unknownValues == 1)
        #expect(session.buds == BudPair(.unrecognized, .outOfEar))
        // Neither value known: nothing invented.
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x07, secondary: 0x09)) == [])
        // One bud in the ear settles "either" whatever the other says.
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x07, secondary: 0x00)) == [.placement(.inEar)])
    }

    @Test func goldenBattery() {
        var session = AAPSession()
        let packet = Self.bytes("04 00 04 00 04 00 03 02 01 64 02 01 04 01 63 01 01 08 01 11 02 01")
        let expected = BatteryReport(
            left: BatteryLevel(percent: 99, isCharging: true),
            right: BatteryLevel(percent: 100, isCharging: false),
            chargingCase: BatteryLevel(percent: 17, isCharging: false))
        #expect(session.receive(packet: packet) == [.battery(expected)])
        // Unchanged: not repeated.
        #expect(session.receive(packet: packet) == [])
        #expect(AAPPacket.battery([
            .init(.right, level: 100, .discharging), .init(.left, level: 99, .charging), .init(.chargingCase, level: 17, .discharging),
        ]) == packet)
    }

    @Test func batteryEdgeValues() {
        var session = AAPSession()
        let packet = AAPPacket.battery([
            .init(.headset, level: 0xFF, .unknown), // absent slot on earbuds
            .init(.left, level: 40, .chargingInCase),
            .init(.right, level: 50, .disconnected),
            .init(kind: 0x10, level: 10, status: 0x02), // unknown kind
            .init(kind: 0x08, level: 101, status: 0x02), // impossible level
        ])
        #expect(session.receive(packet: packet) == [.battery(BatteryReport(left: BatteryLevel(percent: 40, isCharging: true)))])
        #expect(session.counters.unknownValues == 2)
        #expect(session.counters.decoded == 1)
    }

    @Test func truncatedBatteryIsMalformed() {
        var session = AAPSession()
        var packet = AAPPacket.battery([.init(.left, level: 40, .charging), .init(.right, level: 50, .charging)])
        packet.removeLast()
        #expect(session.receive(packet: packet).allSatisfy { if case .note = $0 { true } else { false } })
        #expect(session.counters.malformed == 1)
        #expect(session.receive(packet: Self.bytes("04 00 04 00 04 00")) == [])
        #expect(session.counters.malformed == 2)
    }

    @Test func truncatedPackets() {
        var session = AAPSession()
        for length in 0..<8 {
            _ = session.receive(packet: Array(Self.bytes("04 00 04 00 06 00 00 00").prefix(length)))
        }
        #expect(session.counters.packets == 8)
        #expect(session.counters.malformed == 8)
        #expect(session.counters.decoded == 0)
        #expect(session.counters.isConsistent)
    }

    @Test func audioSource() throws {
        var session = AAPSession()
        let host = try #require(BluetoothAddress("AA:BB:CC:DD:EE:FF"))
        let packet = AAPPacket.audioSource(address: host, activity: 0x02)
        #expect(packet == Self.bytes("04 00 04 00 0E 00 FF EE DD CC BB AA 02"))
        #expect(session.receive(packet: packet) == [.audioSource(AudioSource(address: host, activity: .media))])
        #expect(session.receive(packet: packet) == [])
        let outputs = session.receive(packet: AAPPacket.audioSource(address: host, activity: 0x09))
        #expect(outputs == [.audioSource(AudioSource(address: host, activity: nil))])
        #expect(session.counters.unknownValues == 1)
        if case let .audioSource(source) = outputs.first { #expect(source.address.description == "AA:BB:CC:DD:EE:FF") }
    }

    @Test func unknownOpcodeCountedOncePerPacketNotedOnce() {
        var session = AAPSession()
        let first = session.receive(packet: Self.bytes("04 00 04 00 77 00 01 02 03"))
        #expect(first.count == 1)
        if case let .note(text) = first.first { #expect(text.contains("0x0077")) } else { Issue.record("no note") }
        #expect(session.receive(packet: Self.bytes("04 00 04 00 77 00")) == [])
        #expect(session.counters.unknownOpcodes == 2)
        // Known opcodes Earshot does not use are ignored, not unknown.
        #expect(session.receive(packet: Self.bytes("04 00 04 00 09 00 0D 02 00 00 00")) == [])
        #expect(session.counters.ignored == 1)
        #expect(session.counters.unknownOpcodes == 2)
        #expect(session.counters.isConsistent)
    }

    @Test func otherHeadersIgnoredAndOversizedDropped() {
        var session = AAPSession()
        #expect(session.receive(packet: Self.bytes("01 00 04 00 00 00")) == [])
        #expect(session.counters.ignored == 1)
        _ = session.receive(packet: AAPPacket.message(opcode: 0x06, body: [UInt8](repeating: 0, count: DriverLimits.maxAAPPacketBytes)))
        #expect(session.counters.oversized == 1)
        #expect(session.buds == nil)
        #expect(session.counters.isConsistent)
    }
}

extension AAPSessionTests {
    @Test func notesAreCappedButCountsAreNot() {
        var session = AAPSession()
        var notes = 0
        for opcode in UInt16(0x60)..<0x80 {
            notes += session.receive(packet: AAPPacket.message(opcode: opcode, body: [])).count
        }
        #expect(notes == DriverLimits.maxNotes)
        #expect(session.counters.unknownOpcodes == 0x20)
    }
}
