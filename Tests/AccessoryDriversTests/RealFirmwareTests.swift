import WireFields
import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// Frames real firmware sent, as public projects keep them, decoded by the drivers' own code.
///
/// Galaxy Buds: GalaxyBudsClient (timschneeb/GalaxyBudsClient, commit 5bbcd94) keeps one
/// extended-status frame per model in `GalaxyBudsClient.Tests/TestData/ExtendedStatusUpdate/*.bin`
/// with the values its decoder must read (`GalaxyBudsClient.Tests/<Model>/ExtendedStatusUpdateTests.cs`).
/// The Buds Pro's (revision 10) header is `29 0C`: bits 0x0400 and 0x0800 set, size 0x29 in the
/// low 10 bits, as the client reads it.
@Suite("real firmware frames")
struct RealFirmwareTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    struct Vector: Sendable, CustomStringConvertible {
        var name: String
        var model: GalaxyBudsModel
        var hex: String
        var buds: BudPair
        var left: Int?
        var right: Int?
        var chargingCase: Int?
        var flags: UInt16 = 0
        var description: String { name }
    }

    static let vectors: [Vector] = [
        Vector(name: "Buds Pro rev 10", model: .plusLiveOrPro,
               hex: "fd290c610a02595e010113640001002200002a012a0101000355000201000002001000010000220200009d24dd",
               buds: BudPair(.inEar, .inCase), left: 89, right: 94, chargingCase: 100, flags: 0x0C00),
        Vector(name: "Buds2 rev 10", model: .secondGenerationOrLater,
               hex: "fd2810610a0364640101113300033f2201003c013c0102000366000100100000000011020101000000bea3dd",
               buds: BudPair(.inEar, .inEar), left: 100, right: 100, chargingCase: 51),
        Vector(name: "Buds2 Pro rev 13", model: .secondGenerationOrLater,
               hex: "fd3100610d046464010033580001bf220001460146010000033500030010010101013203010101000cae0100030001000101b637dd",
               buds: BudPair(.inCase, .inCase), left: 100, right: 100, chargingCase: 88),
        Vector(name: "Buds FE rev 2", model: .secondGenerationOrLater,
               hex: "fd31106102063a590100110000008f3300004a014a01030004650001001000000101110300000000e80300009d0e1d005000c2cfdd",
               buds: BudPair(.inEar, .inEar), left: 58, right: 89, chargingCase: 0),
        Vector(name: "Buds Live rev 9", model: .plusLiveOrPro,
               hex: "fd1c106109010f610100116400000022010017011701000003001000000281dd",
               buds: BudPair(.inEar, .inEar), left: 15, right: 97, chargingCase: 100),
        // The case level 101 is no level (GalaxyBudsClient shows it as is): left out, counted.
        Vector(name: "Buds+ rev 13", model: .plusLiveOrPro,
               hex: "fd1b10610d00575401001165000000030022010401040100000003001e55dd",
               buds: BudPair(.inEar, .inEar), left: 87, right: 84, chargingCase: nil),
        Vector(name: "Buds (2019) rev 3", model: .firstGeneration,
               hex: "fe0112610300465f0100000000020107002201a575ee",
               buds: BudPair(.outOfEar, .outOfEar), left: 70, right: 95, chargingCase: nil),
    ]

    @Test("every model generation's real status frame decodes, flag bits kept and counted", arguments: vectors)
    func galaxyBuds(_ vector: Vector) throws {
        var session = GalaxyBudsSession(model: vector.model)
        let outputs = session.receive(bytes: Self.bytes(vector.hex))
        #expect(session.counters.decoded == 1 && session.counters.isConsistent, "\(session.counters)")
        #expect(session.buds == vector.buds)
        #expect(outputs.contains(.placement(try #require(vector.buds.placement(rule: .either)))))
        let battery = outputs.compactMap { output -> BatteryReport? in if case .battery(let report) = output { report } else { nil } }.first
        #expect(battery?.left?.percent == vector.left && battery?.right?.percent == vector.right)
        #expect(battery?.chargingCase?.percent == vector.chargingCase)
        #expect(session.counters.flaggedFrames == (vector.flags == 0 ? 0 : 1))
        if vector.flags != 0 { #expect(outputs.contains { if case .note(let text) = $0 { text.contains("0x0C00") } else { false } }) }
        // The decoder `earshot driver decode` uses reads the flags too.
        var decoder = GalaxyBudsDecoder(model: vector.model)
        let decoded = decoder.receiveFrames(bytes: Self.bytes(vector.hex))
        #expect(decoded.count == 1 && decoded.first?.headerFlags == vector.flags)
    }

    /// librepods-rust names ear value 0x03 "disconnected", MagicPodsCore "in the closed case":
    /// the only connected bud taken out (`06 00 01 03`) is off the head.
    @Test("AAP ear value 0x03 is out: the only connected bud taken out is off the head")
    func aapDisconnectedBud() {
        var session = AAPSession()
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x00, secondary: 0x03)) == [.placement(.inEar)])
        #expect(session.receive(packet: AAPPacket.earDetection(primary: 0x01, secondary: 0x03)) == [.placement(.offHead)])
        #expect(session.buds == BudPair(.outOfEar, .disconnected))
        #expect(session.counters.unknownValues == 0)
    }

    @Test("a complete 9-component AAP battery packet is read, not refused as truncated")
    func aapNineComponents() {
        var session = AAPSession()
        let entries = [AAPPacket.BatteryEntry(.left, level: 40, .discharging), .init(.right, level: 41, .discharging)]
            + (0..<7).map { _ in AAPPacket.BatteryEntry(kind: 0x20, level: 0xFF, status: 0x00) }
        let outputs = session.receive(packet: AAPPacket.battery(entries))
        #expect(session.counters.decoded == 1 && session.counters.malformed == 0)
        #expect(outputs.contains { if case .battery(let report) = $0 { report.left?.percent == 40 } else { false } })
        // Truncated for real (the count says more than the packet holds): malformed.
        var short = AAPPacket.battery(entries)
        short.removeLast(3)
        _ = session.receive(packet: short)
        #expect(session.counters.malformed == 1)
    }

    @Test("opcodes the public notes name are ignored, not unknown; a session of them skips nothing")
    func aapNamedOpcodes() {
        var session = AAPSession()
        for opcode: UInt16 in [0x02, 0x08, 0x2B, 0x4F, 0x4D] {
            _ = session.receive(packet: AAPPacket.message(opcode: opcode, body: [0x01, 0x02]))
            #expect(AAPPacket.decode(AAPPacket.message(opcode: opcode, body: [])) == .ignored(opcode: opcode))
        }
        #expect(session.counters.ignored == 5 && session.counters.unknownOpcodes == 0)
    }

    @Test("legacy Buds wear bytes other than 0x00, 0x01, 0x10, 0x11 read as neither bud worn (counted)")
    func legacyWearOther() {
        var session = GalaxyBudsSession(model: .firstGeneration)
        var payload = Array(Self.bytes("0300465f0100000000020107002201"))
        payload[6] = 0x05
        let outputs = session.receive(bytes: GalaxyBudsFrame.encode(id: 0x61, payload: payload, framing: .legacy))
        #expect(outputs.contains(.placement(.offHead)))
        #expect(session.counters.unknownValues >= 1)
    }
}
