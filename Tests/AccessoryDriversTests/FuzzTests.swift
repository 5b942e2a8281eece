import Testing
@testable import AccessoryDrivers

/// A tiny deterministic generator (Knuth's MMIX LCG) so every run fuzzes the same inputs.
struct LCG {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

struct FuzzTests {
    @Test func aapRandomPacketsNeverCrashAndStayConsistent() {
        var random = LCG(seed: 0xEA25_4071)
        var session = AAPSession()
        for index in 0..<10_000 {
            var packet: [UInt8]
            switch random.below(4) {
            case 0: packet = random.bytes(random.below(40))
            case 1:
                // Plausible messages with a known opcode and a random (often short) body.
                let opcode = [0x04, 0x06, 0x0E, 0x09, 0x2E][random.below(5)]
                packet = AAPPacket.message(opcode: UInt16(opcode), body: random.bytes(random.below(30)))
            case 2:
                packet = AAPPacket.battery((0..<random.below(5)).map { _ in .init(kind: random.byte(), level: random.byte(), status: random.byte()) })
                if random.below(2) == 0 { packet = Array(packet.prefix(random.below(packet.count + 1))) }
            default: packet = AAPPacket.earDetection(primary: UInt8(random.below(4)), secondary: UInt8(random.below(4)))
            }
            if index % 1000 == 0 { packet = random.bytes(DriverLimits.maxAAPPacketBytes + 1) }
            _ = session.receive(packet: packet)
        }
        #expect(session.counters.packets == 10_000)
        #expect(session.counters.isConsistent)
        #expect(session.counters.oversized == 10)
    }

    @Test(arguments: GalaxyBudsModel.allCases)
    func galaxyRandomChunksNeverCrashAndStayConsistent(model: GalaxyBudsModel) {
        var random = LCG(seed: 0x6A1A_0000 + UInt64(model.rawValue.count))
        var session = GalaxyBudsSession(model: model)
        var validFrames = 0
        for _ in 0..<10_000 {
            var chunk: [UInt8]
            switch random.below(4) {
            case 0: chunk = random.bytes(random.below(64))
            case 1:
                // Random bytes salted with markers, to provoke false starts.
                chunk = random.bytes(random.below(64)).map { random.below(8) == 0 ? model.framing.startMarker : $0 }
            default:
                let payload = random.below(3) == 0 ? random.bytes(random.below(30)) : [0, 50, 60, 1, 0, UInt8(random.below(0x50)), 40, 0]
                chunk = GalaxyBudsFrame.encode(id: [0x60, 0x61, 0x77][random.below(3)], payload: payload, framing: model.framing)
                validFrames += 1
                if random.below(5) == 0 { chunk[random.below(chunk.count)] ^= UInt8(1 + random.below(255)) }
            }
            // Cut the chunk anywhere and feed it in two reads.
            let cut = random.below(chunk.count + 1)
            _ = session.receive(bytes: Array(chunk[..<cut]))
            _ = session.receive(bytes: Array(chunk[cut...]))
            #expect(session.bufferedByteCount <= DriverLimits.maxGalaxyBufferedBytes)
        }
        #expect(session.counters.isConsistent)
        #expect(session.counters.decoded > 0)
        #expect(session.counters.packets > 0)
    }

    @Test func galaxyCleanStreamLosesNothingHoweverItIsCut() {
        var random = LCG(seed: 42)
        var stream: [UInt8] = []
        for _ in 0..<2_000 {
            stream += GalaxyBudsFrame.encode(id: 0x60, payload: [0, 50, 60, 1, 0, UInt8(random.below(5)) << 4 | UInt8(random.below(5)), 40], framing: .current)
        }
        var session = GalaxyBudsSession(model: .secondGenerationOrLater)
        var offset = 0
        while offset < stream.count {
            let length = min(1 + random.below(50), stream.count - offset)
            _ = session.receive(bytes: Array(stream[offset..<(offset + length)]))
            offset += length
        }
        #expect(session.counters.decoded == 2_000)
        #expect(session.counters.packets == 2_000)
        #expect(session.counters.skippedBytes == 0)
    }
}

/// A million random frames per codec (issue 13's "survive 1M random frames"): no crash, the
/// counters add up, buffering stays under its cap, and no random AAP packet turns into a
/// placement unless it is a well-formed ear-detection message with known states.
struct MillionFrameFuzzTests {
    static let frames = 1_000_000

    @Test func aapMillionRandomPackets() {
        var random = LCG(seed: 0x0A_A9_1000)
        var session = AAPSession()
        var placements = 0
        for _ in 0..<Self.frames {
            // Mostly pure noise, some with the AAP header in front of noise.
            var packet = random.bytes(1 + random.below(24))
            if random.below(4) == 0 { packet = [0x04, 0x00, 0x04, 0x00] + packet }
            let outputs = session.receive(packet: packet)
            if outputs.contains(where: { if case .placement = $0 { true } else { false } }) {
                placements += 1
                let wellFormed = packet.count >= 8 && packet.starts(with: [0x04, 0x00, 0x04, 0x00, 0x06, 0x00]) && packet[6] <= 2 && packet[7] <= 2
                #expect(wellFormed, "a placement from \(packet)")
            }
        }
        #expect(session.counters.packets == Self.frames)
        #expect(session.counters.isConsistent)
        #expect(placements < Self.frames / 1000, "placements only from the rare well-formed packet")
    }

    @Test(arguments: GalaxyBudsModel.allCases)
    func galaxyMillionRandomChunks(model: GalaxyBudsModel) {
        var random = LCG(seed: 0x6A1A_1000 + UInt64(model.rawValue.count))
        var session = GalaxyBudsSession(model: model)
        for _ in 0..<Self.frames {
            var chunk = random.bytes(1 + random.below(24))
            if random.below(8) == 0 { chunk[0] = model.framing.startMarker }
            _ = session.receive(bytes: chunk)
        }
        #expect(session.bufferedByteCount <= DriverLimits.maxGalaxyBufferedBytes)
        #expect(session.counters.isConsistent)
    }
}
