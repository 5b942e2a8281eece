import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// A set, or something pretending to be one, that misbehaves: the session stays bounded, counts
/// every frame once and never invents a placement.
struct SonyHostileTests {
    /// A running XM6-kind session, then `stream`: the placements, counters and buffer.
    static func feed(_ stream: [UInt8], chunk: Int) -> (SonySession, [DriverOutput]) {
        var (session, _) = SonyWearTests.running(form: .headphones, table2Checker: false, wearAnswer: [0xF3, 0x10, 0x01])
        var outputs: [DriverOutput] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + chunk)
            outputs += session.receive(bytes: Array(stream[offset..<end]))
            #expect(session.bufferedByteCount <= DriverLimits.maxSonyFrameBytes)
            offset = end
        }
        return (session, outputs)
    }

    @Test func anyChunkingReadsTheSame() {
        let pushes = [0x00, 0x13] + sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x00]) + [0x3C, 0x3D] + sonyFrame(.table1, seq: 0, [0xF5, 0x10, 0x01, 0x01])
            + sonyFrame(.table1, seq: 1, [0x25, 0x00, 0x3C, 0x00])
        let (whole, wholeOutputs) = Self.feed(pushes, chunk: pushes.count)
        for chunk in [1, 2, 3, 7] {
            let (split, outputs) = Self.feed(pushes, chunk: chunk)
            // Notes may come at another point of the stream; what is sent and said is the same.
            #expect(outputs.filter { if case .note = $0 { false } else { true } } == wholeOutputs.filter { if case .note = $0 { false } else { true } })
            #expect(split.counters == whole.counters)
        }
        #expect(wholeOutputs.placements == [.onHead, .offHead])
        #expect(whole.counters.skippedBytes == 4 && whole.counters.isConsistent)
    }

    @Test func damagedFramesNeverPlaceAndAreNotAcked() {
        var worn = sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x00])
        worn[worn.count - 2] ^= 0xFF
        let badEscape: [UInt8] = [0x3E, 0x0C, 0x01, 0x00, 0x00, 0x00, 0x04, 0xF5, 0x10, 0x01, 0x3D, 0x00, 0x00, 0x3C]
        let fourGiB: [UInt8] = [0x3E, 0x0C, 0x01, 0xFF, 0xFF, 0xFF, 0xFF] + Array(repeating: 0x00, count: 5000)
        let (session, outputs) = Self.feed(worn + badEscape + fourGiB, chunk: 97)
        #expect(outputs.placements.isEmpty && outputs.sent.isEmpty)
        #expect(session.counters.badCRC == 1 && session.counters.malformed == 1 && session.counters.oversized == 1)
        #expect(session.counters.isConsistent)
    }

    @Test func seededFuzzKeepsCountersConsistentAndTheBufferCapped() {
        var generator = LCG(seed: 0x50_4E_59)
        let pieces: [[UInt8]] = [
            sonyFrame(.table1, seq: 0, [0xF5, 0x10, 0x01, 0x00]), sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x01]),
            sonyFrame(.table2, seq: 0, [0xF5, 0x00, 0x02]), sonyFrame(.table1, seq: 1, [0x25, 0x00, 0x3E, 0x01]),
            sonyAck(0), sonyAck(1), sonyFrame(.table1, seq: 0, [0xC9, 0x01, 0x08] + Array("unitWear".utf8)),
            [0x3E], [0x3C], [0x3D], [0x3D, 0x2D], [0x3E, 0x0C, 0x00, 0x7F, 0xFF, 0xFF, 0xFF],
        ]
        for round in 0..<40 {
            var session = SonySession(form: round.isMultiple(of: 2) ? .headphones : .earbuds, rule: round.isMultiple(of: 3) ? .both : .either)
            _ = session.start()
            var stream: [UInt8] = []
            for _ in 0..<200 {
                var piece = pieces[Int(generator.next() % UInt64(pieces.count))]
                if generator.next() % 4 == 0, !piece.isEmpty { piece[Int(generator.next() % UInt64(piece.count))] = UInt8(truncatingIfNeeded: generator.next()) }
                if generator.next() % 8 == 0 { piece += (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
                stream += piece
            }
            var offset = 0
            var sends = 0
            while offset < stream.count {
                let end = min(stream.count, offset + 1 + Int(generator.next() % 64))
                sends += session.receive(bytes: Array(stream[offset..<end])).sent.count
                if generator.next() % 16 == 0, let deadline = session.deadline { sends += session.timeout(generation: deadline.generation).sent.count }
                #expect(session.bufferedByteCount <= DriverLimits.maxSonyFrameBytes)
                offset = end
            }
            #expect(session.counters.isConsistent, "round \(round): \(session.counters)")
            // Sends are bounded by frames in (one ACK each, at most two commands) plus timeouts.
            #expect(sends <= 3 * session.counters.packets + 200)
        }
    }
}
