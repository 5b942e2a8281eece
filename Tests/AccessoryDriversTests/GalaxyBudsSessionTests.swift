import WireFields
import RoutingPolicy
import Testing
@testable import AccessoryDrivers

struct GalaxyBudsSessionTests {
    /// A first-generation EXTENDED_STATUS_UPDATED payload with its CRC bytes (0F F3), quoted in a
    /// comment of GalaxyBudsClient's Utils/Crc16.cs; the frame around it follows the layout in
    /// "Galaxy Buds RFComm Protocol.md" (FE, type, size, ..., EE).
    static let legacyExtendedPayload: [UInt8] = [0x02, 0x00, 0x4B, 0x5F, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x02, 0x00, 0x13]

    /// A later-generation STATUS_UPDATED payload: revision, left %, right %, coupled, main,
    /// placement (left nibble, right nibble), case %.
    static func status(left: UInt8 = 80, right: UInt8 = 70, placement: UInt8, case caseLevel: UInt8 = 50) -> [UInt8] {
        [0x0B, left, right, 0x01, 0x00, placement, caseLevel]
    }

    static func frame(_ payload: [UInt8], id: UInt8 = GalaxyBudsFrame.MessageID.statusUpdated) -> [UInt8] {
        GalaxyBudsFrame.encode(id: id, payload: payload, framing: .current)
    }

    @Test func crcCheckValue() {
        #expect(CRC16XModem.checksum(Array("123456789".utf8)) == 0x31C3)
    }

    @Test func encoderMatchesTheGoldenLegacyFrame() {
        // The payload above has 14 bytes, so the size is 1 + 14 + 2 = 17 (0x11).
        let golden: [UInt8] = [0xFE, 0x00, 0x11, 0x61] + Self.legacyExtendedPayload + [0x0F, 0xF3, 0xEE]
        #expect(GalaxyBudsFrame.encode(id: 0x61, payload: Self.legacyExtendedPayload, framing: .legacy) == golden)
    }

    @Test func goldenLegacyExtendedStatus() {
        var session = GalaxyBudsSession(model: .firstGeneration)
        let golden: [UInt8] = [0xFE, 0x00, 0x11, 0x61] + Self.legacyExtendedPayload + [0x0F, 0xF3, 0xEE]
        let outputs = session.receive(bytes: golden)
        // Wear byte (offset 6) is 0x00: neither bud worn. Batteries 0x4B = 75 %, 0x5F = 95 %.
        #expect(outputs == [
            .placement(.offHead),
            .battery(BatteryReport(left: BatteryLevel(percent: 75, isCharging: nil), right: BatteryLevel(percent: 95, isCharging: nil))),
        ])
        #expect(session.counters.decoded == 1)
    }

    /// First-generation wear byte -> (left, right).
    static let legacyWearCases: [(UInt8, BudPair)] = [
        (0x00, BudPair(.outOfEar, .outOfEar)), (0x01, BudPair(.outOfEar, .inEar)), (0x10, BudPair(.inEar, .outOfEar)),
        (0x11, BudPair(.inEar, .inEar)), (0x05, BudPair(.outOfEar, .outOfEar)),
    ]

    @Test(arguments: legacyWearCases)
    func legacyWearByte(byte: UInt8, buds: BudPair) {
        for rule in WearRule.allCases {
            var session = GalaxyBudsSession(model: .firstGeneration, rule: rule)
            let payload: [UInt8] = [0x00, 60, 61, 0x01, 0x00, byte]
            let outputs = session.receive(bytes: GalaxyBudsFrame.encode(id: 0x60, payload: payload, framing: .legacy))
            #expect(session.buds == buds)
            #expect(outputs.contains(.placement(buds.placement(rule: rule) ?? .onHead)) == (buds.placement(rule: rule) != nil))
            #expect(session.counters.unknownValues == (byte == 0x05 ? 1 : 0))
        }
    }

    @Test(arguments: WearRule.allCases)
    func everyPlacementNibbleCombination(rule: WearRule) {
        let states: [UInt8: BudState] = [0: .disconnected, 1: .inEar, 2: .outOfEar, 3: .inCase, 4: .inCase, 9: .unrecognized]
        for (leftNibble, left) in states {
            for (rightNibble, right) in states {
                for model in [GalaxyBudsModel.plusLiveOrPro, .secondGenerationOrLater] {
                    var session = GalaxyBudsSession(model: model, rule: rule)
                    let outputs = session.receive(bytes: Self.frame(Self.status(placement: leftNibble << 4 | rightNibble)))
                    let pair = BudPair(left, right)
                    #expect(session.buds == pair)
                    let placements = outputs.compactMap { if case let .placement(p) = $0 { p } else { nil } }
                    #expect(placements == [pair.placement(rule: rule)].compactMap { $0 })
                }
            }
        }
    }

    @Test func extendedStatusOffsets() {
        var session = GalaxyBudsSession(model: .secondGenerationOrLater)
        // revision, ear type, left, right, coupled, main, placement, case, then settings.
        let payload: [UInt8] = [0x0B, 0x00, 33, 44, 0x01, 0x01, 0x13, 55, 0, 0, 0, 0]
        let outputs = session.receive(bytes: Self.frame(payload, id: 0x61))
        #expect(session.buds == BudPair(.inEar, .inCase))
        #expect(outputs == [
            .placement(.inEar),
            .battery(BatteryReport(left: BatteryLevel(percent: 33, isCharging: nil), right: BatteryLevel(percent: 44, isCharging: nil), chargingCase: BatteryLevel(percent: 55, isCharging: nil))),
        ])
    }

    @Test func disconnectedBudHasNoBatteryAndImpossibleLevelsAreCounted() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        // Left disconnected (its 90 % is stale), right in the ear at an impossible 200 %, case 0xFF.
        let outputs = session.receive(bytes: Self.frame(Self.status(left: 90, right: 200, placement: 0x01, case: 0xFF)))
        #expect(outputs == [.placement(.inEar)])
        #expect(session.buds == BudPair(.disconnected, .inEar))
        #expect(session.counters.unknownValues == 2)
    }

    @Test func placementOnlyOnChange() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        #expect(session.receive(bytes: Self.frame(Self.status(placement: 0x11))).first == .placement(.inEar))
        #expect(session.receive(bytes: Self.frame(Self.status(placement: 0x12))) == [])
        #expect(session.receive(bytes: Self.frame(Self.status(placement: 0x22))) == [.placement(.offHead)])
        #expect(session.receive(bytes: Self.frame(Self.status(placement: 0x33))) == [])
        #expect(session.counters.decoded == 4)
    }

    @Test func startSendsNothing() {
        var session = GalaxyBudsSession(model: .secondGenerationOrLater)
        #expect(session.start() == [])
    }

    @Test func splitAtEveryByte() {
        let stream = Self.frame(Self.status(placement: 0x11)) + Self.frame(Self.status(placement: 0x22, case: 51))
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        var outputs: [DriverOutput] = []
        for byte in stream { outputs += session.receive(bytes: [byte]) }
        #expect(outputs.filter { if case .placement = $0 { true } else { false } } == [.placement(.inEar), .placement(.offHead)])
        #expect(session.counters.decoded == 2)
        #expect(session.counters.packets == 2)
        #expect(session.bufferedByteCount == 0)
    }

    @Test func coalescedFramesInOneChunk() {
        let stream = Self.frame(Self.status(placement: 0x11)) + Self.frame([1, 2, 3], id: 0x77) + Self.frame(Self.status(placement: 0x22))
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let outputs = session.receive(bytes: stream)
        #expect(outputs.filter { if case .placement = $0 { true } else { false } } == [.placement(.inEar), .placement(.offHead)])
        #expect(session.counters.decoded == 2)
        #expect(session.counters.unknownOpcodes == 1)
    }

    @Test func garbageBeforeAFrameIsSkippedAndCounted() {
        // Garbage containing a false start marker with an impossible size.
        let garbage: [UInt8] = [0x00, 0x13, 0xFD, 0x01, 0x00, 0x42, 0xEE]
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let outputs = session.receive(bytes: garbage + Self.frame(Self.status(placement: 0x11)))
        #expect(outputs.contains(.placement(.inEar)))
        #expect(session.counters.decoded == 1)
        #expect(session.counters.malformed == 1) // the false start (size 1)
        #expect(session.counters.skippedBytes == 6)
        #expect(session.counters.isConsistent)
    }

    @Test func badCRCDroppedAndCountedThenResync() {
        var bad = Self.frame(Self.status(placement: 0x11))
        bad[bad.count - 3] ^= 0x5A
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let outputs = session.receive(bytes: bad + Self.frame(Self.status(placement: 0x22)))
        #expect(session.counters.badCRC == 1)
        #expect(session.counters.decoded == 1)
        #expect(outputs.contains(.placement(.offHead)))
        #expect(!outputs.contains(.placement(.inEar)))
        #expect(outputs.contains(.note("Galaxy Buds: dropped a frame with a bad CRC")))
    }

    @Test("a false start claiming the largest size waits for its bytes, then resyncs to the real frame behind it")
    func largeFalseStartResyncs() {
        // Header 0x07FF: size 0x3FF (the low 10 bits), flag 0x0400: 1027 bytes to wait for.
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let real = Self.frame(Self.status(placement: 0x11))
        _ = session.receive(bytes: [0xFD, 0xFF, 0x07] + [UInt8](repeating: 0x00, count: 20) + real)
        #expect(session.counters.decoded == 0, "the false start's frame is not complete yet")
        _ = session.receive(bytes: [UInt8](repeating: 0x00, count: 1100))
        #expect(session.counters.malformed == 1 && session.counters.decoded == 1)
        #expect(session.counters.oversized == 0)
        #expect(session.counters.isConsistent)
    }

    @Test func largestFrameWaitsWithinTheCapAndPasses() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let big = GalaxyBudsFrame.encode(id: 0x77, payload: [UInt8](repeating: 0xAB, count: 1020), framing: .current)
        _ = session.receive(bytes: Array(big.prefix(600)))
        #expect(session.bufferedByteCount == 600)
        _ = session.receive(bytes: Array(big.dropFirst(600)))
        #expect(session.counters.unknownOpcodes == 1)
        #expect(session.bufferedByteCount == 0)
    }

    @Test func fragmentsAreIgnored() {
        var session = GalaxyBudsSession(model: .secondGenerationOrLater)
        _ = session.receive(bytes: GalaxyBudsFrame.encode(id: 0x60, payload: Self.status(placement: 0x11), framing: .current, isFragment: true))
        #expect(session.counters.ignored == 1)
        #expect(session.buds == nil)
    }

    @Test func truncatedStatusIsMalformed() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        _ = session.receive(bytes: Self.frame(Array(Self.status(placement: 0x11).prefix(6))))
        _ = session.receive(bytes: Self.frame([], id: 0x61))
        #expect(session.counters.malformed == 2)
        #expect(session.buds == nil)
        var legacy = GalaxyBudsSession(model: .firstGeneration)
        _ = legacy.receive(bytes: GalaxyBudsFrame.encode(id: 0x61, payload: [0, 0, 50, 50, 1, 0], framing: .legacy))
        #expect(legacy.counters.malformed == 1)
    }

    @Test func wrongFramingIsNeverDecoded() {
        var session = GalaxyBudsSession(model: .firstGeneration)
        _ = session.receive(bytes: Self.frame(Self.status(placement: 0x11)))
        #expect(session.counters.decoded == 0)
        #expect(session.buds == nil)
    }

    @Test func bufferNeverExceedsTheCap() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        // A start marker that claims a 1000-byte frame, then endless bytes without markers.
        _ = session.receive(bytes: [0xFD, 0xE8, 0x03])
        for _ in 0..<20 {
            _ = session.receive(bytes: [UInt8](repeating: 0x11, count: 1000))
            #expect(session.bufferedByteCount <= DriverLimits.maxGalaxyBufferedBytes)
        }
        #expect(session.counters.malformed == 1)
        #expect(session.counters.isConsistent)
    }
}

extension GalaxyBudsSessionTests {
    @Test func unknownIdCountedPerFrameNotedOnce() {
        var session = GalaxyBudsSession(model: .secondGenerationOrLater)
        let first = session.receive(bytes: Self.frame([0x01], id: 0x77))
        #expect(first == [.note("Galaxy Buds: skipping message id 0x77 (counted from now on, not logged)")])
        #expect(session.receive(bytes: Self.frame([0x02], id: 0x77) + Self.frame([], id: 0x77)) == [])
        #expect(session.counters.unknownOpcodes == 3)
        #expect(session.counters.isConsistent)
    }

    @Test func responseFlagIsReadNotRequired() {
        var session = GalaxyBudsSession(model: .plusLiveOrPro)
        let bytes = GalaxyBudsFrame.encode(id: 0x60, payload: Self.status(placement: 0x11), framing: .current, isResponse: true)
        #expect(bytes[2] & 0x10 != 0)
        #expect(session.receive(bytes: bytes).first == .placement(.inEar))
    }
}
