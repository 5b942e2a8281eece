import WireFields
import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// `AAPPacket.decode` and `GalaxyBudsDecoder`: per-packet decoding for `earshot driver decode`.
struct PacketDecodeTests {
    static func bytes(_ text: String) -> [UInt8] {
        guard case .success(let line) = PacketLogLine.parse(text) else { return [] }
        return line.bytes
    }

    @Test func aapGoldenEarDetection() {
        // docs/drivers.md: 04 00 04 00 06 00 <primary> <secondary>, 0x00 in ear, 0x01 out.
        #expect(AAPPacket.decode(Self.bytes("04 00 04 00 06 00 00 01")) == .earDetection(BudPair(.inEar, .outOfEar), components: []))
        #expect(AAPPacket.decode(Self.bytes("04 00 04 00 06 00 02 07")) == .earDetection(BudPair(.inCase, .unrecognized), components: []))
    }

    @Test func aapGoldenBattery() {
        // The AirPods Pro 2 example: right 100 discharging, left 99 charging, case 17 discharging.
        let packet = Self.bytes("04 00 04 00 04 00 03 02 01 64 02 01 04 01 63 01 01 08 01 11 02 01")
        #expect(AAPPacket.decode(packet) == .battery([
            BatteryComponent(kind: .right, level: 100, status: .discharging),
            BatteryComponent(kind: .left, level: 99, status: .charging),
            BatteryComponent(kind: .chargingCase, level: 17, status: .discharging),
        ]))
        // Absent level, disconnected, charging in the case, unknown status, headset, unknown kind.
        let odd = AAPPacket.battery([
            .init(kind: 0x04, level: 0xFF, status: 0x04), .init(kind: 0x02, level: 30, status: 0x05),
            .init(kind: 0x08, level: 101, status: 0x09), .init(kind: 0x01, level: 55, status: 0x00), .init(kind: 0x10, level: 1, status: 0x01),
        ])
        // The absent slot (0xFF) is left out, as the session leaves it out.
        #expect(AAPPacket.decode(odd) == .battery([
            BatteryComponent(kind: .right, level: 30, status: .charging),
            BatteryComponent(kind: .chargingCase, level: nil, status: .unknown),
            BatteryComponent(kind: .headphone, level: 55, status: .unknown),
        ]))
    }

    @Test func aapOtherPackets() {
        let host = BluetoothAddress("11:22:33:44:55:66")!
        #expect(AAPPacket.decode(AAPPacket.audioSource(address: host, activity: 0x02)) == .audioSource(AudioSource(address: host, activity: .media)))
        #expect(AAPPacket.decode(AAPPacket.handshake) == .ignored(opcode: nil))
        #expect(AAPPacket.decode(AAPPacket.message(opcode: 0x19, body: [1])) == .ignored(opcode: 0x19))
        #expect(AAPPacket.decode(AAPPacket.message(opcode: 0x2F, body: [1])) == .unknown(opcode: 0x2F))
        #expect(AAPPacket.decode([0x04, 0x00]) == .malformed(why: "2-byte packet, shorter than a header"))
        #expect(AAPPacket.decode(AAPPacket.messageHeader + [0x06]) == .malformed(why: "message without an opcode"))
        #expect(AAPPacket.decode(AAPPacket.message(opcode: 0x06, body: [0])) == .malformed(why: "truncated ear detection packet (7 bytes)"))
        #expect(AAPPacket.decode(AAPPacket.message(opcode: 0x04, body: [2, 4, 1, 50, 1, 1])) == .malformed(why: "truncated battery packet (12 bytes)"))
        #expect(AAPPacket.decode([UInt8](repeating: 0, count: 2049)) == .malformed(why: "2049-byte packet over the 2048-byte cap"))
    }

    /// The decoder classifies every packet as the session counts it, and its wear state is the
    /// session's `buds`: the two cannot drift apart.
    @Test func aapDecodeAgreesWithTheSession() {
        var random = LCG(seed: 0xDEC0_DE)
        var session = AAPSession()
        for _ in 0..<5_000 {
            var packet: [UInt8]
            switch random.below(3) {
            case 0: packet = random.bytes(random.below(30))
            case 1: packet = AAPPacket.messageHeader + [[0x04, 0x06, 0x0E, 0x19, 0x2F][random.below(5)], 0x00] + random.bytes(random.below(20))
            default: packet = AAPPacket.earDetection(primary: UInt8(random.below(4)), secondary: UInt8(random.below(4)))
            }
            let before = session.counters
            _ = session.receive(packet: packet)
            let after = session.counters
            switch AAPPacket.decode(packet) {
            case .earDetection(let buds, _):
                #expect(after.decoded == before.decoded + 1)
                #expect(session.buds == buds)
            case .battery, .audioSource: #expect(after.decoded == before.decoded + 1)
            case .ignored: #expect(after.ignored == before.ignored + 1)
            case .unknown: #expect(after.unknownOpcodes == before.unknownOpcodes + 1)
            case .malformed: #expect(after.malformed + after.oversized == before.malformed + before.oversized + 1)
            case .wear, .ack, .protocolInfo, .supportFunctions: Issue.record("AAP decoded a Sony-only kind")
            }
        }
    }

    static func status(placement: UInt8) -> [UInt8] { [0x0B, 80, 70, 0x01, 0x00, placement, 50] }

    @Test func galaxyStatusAcrossChunks() {
        var decoder = GalaxyBudsDecoder(model: .secondGenerationOrLater)
        let frame = GalaxyBudsFrame.encode(id: 0x60, payload: Self.status(placement: 0x12), framing: .current)
        #expect(decoder.receive(bytes: Array(frame.prefix(5))) == [])
        let expected = DecodedPacket.earDetection(BudPair(.inEar, .outOfEar), components: [
            BatteryComponent(kind: .left, level: 80, status: .unknown), BatteryComponent(kind: .right, level: 70, status: .unknown),
            BatteryComponent(kind: .chargingCase, level: 50, status: .unknown),
        ])
        #expect(decoder.receive(bytes: Array(frame.dropFirst(5))) == [expected])
        // Repeated states are reported again (no change filter), two frames in one chunk.
        #expect(decoder.receive(bytes: frame + frame) == [expected, expected])
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func galaxyDisconnectedBudAndLegacyGolden() {
        var later = GalaxyBudsDecoder(model: .plusLiveOrPro)
        #expect(later.receive(bytes: GalaxyBudsFrame.encode(id: 0x60, payload: Self.status(placement: 0x01), framing: .current)) == [
            .earDetection(BudPair(.disconnected, .inEar), components: [
                BatteryComponent(kind: .left, level: nil, status: .disconnected), BatteryComponent(kind: .right, level: 70, status: .unknown),
                BatteryComponent(kind: .chargingCase, level: 50, status: .unknown),
            ]),
        ])
        var first = GalaxyBudsDecoder(model: .firstGeneration)
        let golden: [UInt8] = [0xFE, 0x00, 0x11, 0x61, 0x02, 0x00, 0x4B, 0x5F, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x02, 0x00, 0x13, 0x0F, 0xF3, 0xEE]
        #expect(first.receive(bytes: golden) == [
            .earDetection(BudPair(.outOfEar, .outOfEar), components: [
                BatteryComponent(kind: .left, level: 75, status: .unknown), BatteryComponent(kind: .right, level: 95, status: .unknown),
            ]),
        ])
    }

    @Test func galaxyDamageUnknownAndShortStatus() {
        var decoder = GalaxyBudsDecoder(model: .secondGenerationOrLater)
        var bad = GalaxyBudsFrame.encode(id: 0x60, payload: Self.status(placement: 0x11), framing: .current)
        bad[bad.count - 2] ^= 0xFF
        #expect(decoder.receive(bytes: [0x00, 0x01] + bad) == [
            // Two bytes of garbage, then the damaged frame but its start marker.
            .malformed(why: "dropped 1 frame with a bad CRC"), .malformed(why: "skipped 15 bytes outside any frame"),
        ])
        #expect(decoder.receive(bytes: GalaxyBudsFrame.encode(id: 0x77, payload: [1, 2], framing: .current)) == [.unknown(opcode: 0x77)])
        #expect(decoder.receive(bytes: GalaxyBudsFrame.encode(id: 0x60, payload: [1, 2], framing: .current))
            == [.malformed(why: "status 0x60 too short for galaxy-buds2-or-later (2 bytes)")])
        #expect(decoder.receive(bytes: GalaxyBudsFrame.encode(id: 0x60, payload: [1], framing: .current, isFragment: true)) == [.ignored(opcode: nil)])
    }
}

/// The packet log's line format.
struct PacketLogLineTests {
    static let device = PacketLogLine.Device(address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, family: .aap)

    @Test func rendersTheDocumentedForm() {
        // 2026-11-22T23:04:05.123Z
        let time: Int64 = 1_795_388_645_123
        #expect(PacketLogLine.timestamp(time) == "2026-11-22T23:04:05.123Z")
        let line = PacketLogLine(time: time, direction: .received, bytes: [0x04, 0x00, 0x04, 0x00, 0x06, 0x00, 0x00, 0x01])
        #expect(line.rendered == "2026-11-22T23:04:05.123Z < 04 00 04 00 06 00 00 01")
        var withDevice = line
        withDevice.device = Self.device
        withDevice.direction = .sent
        #expect(withDevice.rendered == "AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.123Z > 04 00 04 00 06 00 00 01")
        #expect(PacketLogLine(bytes: [0xAB, 0x0C]).rendered == "AB 0C")
    }

    @Test("render then parse gives the line back", arguments: [Int64(0), 951_782_400_000, 1_795_388_645_123, 4_102_444_799_999, -1])
    func roundTrip(time: Int64) {
        for family in [AccessoryFamily.aap, .galaxyBuds(.firstGeneration), .galaxyBuds(.plusLiveOrPro), .galaxyBuds(.secondGenerationOrLater)] {
            let line = PacketLogLine(
                device: .init(address: BluetoothAddress("01:23:45:67:89:AB")!, family: family), time: time, direction: .received,
                bytes: [0x00, 0xFF, 0x10, 0xDD])
            #expect(PacketLogLine.parse(line.rendered) == .success(line))
        }
        #expect(PacketLogLine.milliseconds(fromTimestamp: PacketLogLine.timestamp(time)) == time)
    }

    @Test func parsesTailsAndBareHex() {
        #expect(PacketLogLine.parse("040004000600") == .success(PacketLogLine(bytes: [4, 0, 4, 0, 6, 0])))
        #expect(PacketLogLine.parse("  04 0004 00\t06 00 ") == .success(PacketLogLine(bytes: [4, 0, 4, 0, 6, 0])))
        #expect(PacketLogLine.parse("> 0a") == .success(PacketLogLine(direction: .sent, bytes: [0x0A])))
        #expect(PacketLogLine.parse("2026-11-22T23:04:05Z < 01") == .success(PacketLogLine(time: 1_795_388_645_000, direction: .received, bytes: [1])))
        #expect(PacketLogLine.parse("2026-11-22T23:04:05.5Z 01") == .success(PacketLogLine(time: 1_795_388_645_500, bytes: [1])))
        #expect(PacketLogLine.parse("2026-11-22T23:04:05.123456Z 01") == .success(PacketLogLine(time: 1_795_388_645_123, bytes: [1])))
        #expect(PacketLogLine.parse("") == .success(PacketLogLine(bytes: [])))
    }

    @Test func refusesWhatIsNotALine() {
        func why(_ text: String) -> String? {
            guard case .failure(let error) = PacketLogLine.parse(text) else { return nil }
            return error.description
        }
        #expect(why("hello") == "\"hello\" is not hex")
        #expect(why("0") == "odd number of hex digits (1)")
        #expect(why("AA:BB:CC:DD:EE:FF 04 00") == "the address must be followed by a family: aap, galaxy-buds, galaxy-buds-plus-live-pro, galaxy-buds2-or-later, sony, sony-earbuds")
        #expect(why("AA:BB:CC:DD:EE aap 04") == "\"AA:BB:CC:DD:EE\" is not a Bluetooth address")
        #expect(why("2026-02-30T00:00:00.000Z < 01") == "\"2026-02-30T00:00:00.000Z\" is not a time like 2026-11-22T23:04:05.123Z")
        #expect(why("2026-11-22T23:04:05.123+01:00 01") != nil)
        #expect(why("< > 01") == "\">\" is not hex")
    }
}
