import Testing
@testable import AccessoryDrivers

/// Golden frames: the fact sheet's sources, each named where quoted. "computed" vectors were
/// built by the fact sheet's author with the sum/escape rules and are checked both ways here.
struct SonyFramingTests {
    /// (kind, seq, payload, frame as it travels).
    static let golden: [(SonyFrame.Kind, UInt8, [UInt8], String)] = [
        // SirAllap/omarchy-headphones docs/captures/sony-wh-ch520.txt @ 4c142cbb3c2eba4b94c810ff478404e00ff9fe7b
        (.table1, 0, [0x00, 0x00], "3e0c000000000200000e3c"),
        (.table1, 1, [0x66, 0x17], "3e0c010000000266178c3c"),
        (.table1, 0, [0x66, 0x15], "3e0c00000000026615893c"),
        (.table1, 1, [0x68, 0x17, 0x01, 0x00, 0x00, 0x00, 0x0A], "3e0c01000000076817010000000a9e3c"),
        // WH-CH720N btmon (docs/captures/sony-wh-ch720n.txt, kevinbsr/omarchy-soundcore-q30 @ f8696fb4f29b303468080f7272361157da6747e7)
        (.table1, 0, [0x01, 0x00, 0x03, 0x00, 0x10, 0x02, 0x00, 0x00], "3e 0c 00 00 00 00 08 01 00 03 00 10 02 00 00 2a 3c"),
        (.table1, 1, [0x67, 0x17, 0x01, 0x01, 0x01, 0x00, 0x14], "3e 0c 01 00 00 00 07 67 17 01 01 01 00 14 a9 3c"),
        // ACK: omarchy-headphones PROTOCOL.md @ c05b4698238b840366f6f00bd57daad804707e2f
        (.ack, 1, [], "3e 01 01 00 00 00 00 02 3c"),
        // WH-910N (Plutoberth/SonyHeadphonesClient PR #23)
        (.table1, 1, [0x69, 0x02, 0x01, 0x02, 0x00, 0x01, 0x00, 0x02], "3e 0c 01 00 00 00 08 69 02 01 02 00 01 00 02 86 3c"),
        // Gadgetbridge SonyProtocolImplV2Test @ a0948ee1cbc2a870f91d313f8e37df5f524465f7
        (.table1, 1, [0x12, 0x02], "3e:0c:01:00:00:00:02:12:02:23:3c"),
        (.table1, 0, [0xF9, 0x01, 0x01], "3e:0c:00:00:00:00:03:f9:01:01:0a:3c"),
        // maniacx/test-bluetooth-battery-meter ext-test-server-*.js @ 0485859a848985bbfaf3eb83173bb4a0eec75f03
        (.table1, 0, [0x23, 0x09, 0x64, 0x00, 0x64, 0x00, 0x64, 0x64], "3e0c00000000082309640064006464d03c"),
        (.table1, 1, [0x23, 0x0A, 0x37, 0x00, 0x1E], "3e0c0100000005230a37001e943c"),
        (.table1, 0, [0x23, 0x00, 0x55, 0x00], "3e0c000000000423005500883c"),
        // Computed (fact sheet §5, §6.4, §7.8)
        (.table1, 0, [0x06, 0x00], "3e 0c 00 00 00 00 02 06 00 14 3c"),
        (.table2, 0, [0x06, 0x00], "3e 0e 00 00 00 00 02 06 00 16 3c"),
        (.table1, 0, [0xC4, 0x01, 0x00], "3e 0c 00 00 00 00 03 c4 01 00 d4 3c"),
        (.table1, 1, [0xF2, 0x10], "3e 0c 01 00 00 00 02 f2 10 11 3c"),
        (.table1, 0, [0xF3, 0x10, 0x00], "3e 0c 00 00 00 00 03 f3 10 00 12 3c"),
        (.table1, 1, [0xF5, 0x10, 0x01, 0x01], "3e 0c 01 00 00 00 04 f5 10 01 01 18 3c"),
        (.table2, 0, [0xF2, 0x00], "3e 0e 00 00 00 00 02 f2 00 02 3c"),
        (.table2, 1, [0xF5, 0x00, 0x04], "3e 0e 01 00 00 00 03 f5 00 04 0b 3c"),
        (.table1, 0, [0x22, 0x0A], "3e 0c 00 00 00 00 02 22 0a 3a 3c"),
        (.table1, 0, [0x10, 0x00], "3e 0c 00 00 00 00 02 10 00 1e 3c"),
    ]

    @Test func goldenFramesEncodeAndRead() {
        for (kind, seq, payload, text) in Self.golden {
            let wire = sonyBytes(text)
            #expect(SonyFrame.encode(kind, seq: seq, payload: payload) == wire, "\(text)")
            var reader = SonyFrameReader()
            var counters = DriverCounters()
            #expect(reader.read(wire, counters: &counters) == [.frame(SonyFrame(type: kind.rawValue, seq: seq, payload: payload))])
            #expect(counters.packets == 1)
        }
    }

    @Test func stuffingRoundTrips() {
        // 3C, 3D, 3E inside travel as 3D 2C / 3D 2D / 3D 2E, the checksum included.
        let payload: [UInt8] = [0x3C, 0x3D, 0x3E, 0x2C, 0x00]
        let wire = SonyFrame.encode(.table1, seq: 0, payload: payload)
        #expect(Array(wire[7..<13]) == [0x3D, 0x2C, 0x3D, 0x2D, 0x3D, 0x2E])
        #expect(wire.dropFirst().dropLast().allSatisfy { $0 != 0x3C && $0 != 0x3E })
        #expect(sonyFrames(wire) == [SonyFrame(type: 0x0C, seq: 0, payload: payload)])
        // A checksum that is itself a marker: 0C + 00 + 02 + 30 = 0x3E.
        let stuffedChecksum = SonyFrame.encode(.table1, seq: 0, payload: [0x30, 0x00])
        #expect(stuffedChecksum.suffix(3) == [0x3D, 0x2E, 0x3C])
        #expect(sonyFrames(stuffedChecksum).count == 1)
    }

    @Test func damageIsNamedAndCountedOnce() {
        let good = SonyFrame.encode(.table1, seq: 0, payload: [0x06, 0x00])
        var badChecksum = good
        badChecksum[badChecksum.count - 2] ^= 0x01
        var badLength = good
        badLength[6] = 0x03
        let badEscape: [UInt8] = [0x3E, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x3D, 0x11, 0x00, 0x3C]
        let oversized: [UInt8] = [0x3E, 0x0C, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]
        let cases: [([UInt8], String)] = [
            (badChecksum, "bad checksum"), (badLength, "bad length"), (badEscape, "bad escape"), (oversized, "oversized"),
            ([0x3E, 0x0C, 0x00, 0x3C], "bad length"), ([0x3E, 0x0C, 0x3D, 0x3C], "bad escape"),
        ]
        for (bytes, why) in cases {
            var reader = SonyFrameReader()
            var counters = DriverCounters()
            let items = reader.read(bytes, counters: &counters)
            guard items.count == 1, case let .damaged(damage) = items[0] else {
                Issue.record("\(bytes): \(items)")
                continue
            }
            #expect(damage.description.hasPrefix(why), "\(damage)")
            #expect(counters.packets == 1 && counters.isConsistent && counters.decoded == 0)
        }
    }

    @Test func garbageSplitAndGlued() {
        let frames = (0..<5).map { SonyFrame.encode(.table1, seq: UInt8($0 & 1), payload: [0x25, 0x00, UInt8(50 + $0), 0x3C]) }
        let stream = [0x00, 0x3C, 0x11] + frames.joined() + [0x99]
        // Split at every byte.
        var reader = SonyFrameReader()
        var counters = DriverCounters()
        var items: [SonyFrameReader.Item] = []
        for byte in stream { items += reader.read([byte], counters: &counters) }
        #expect(items.count == 5 && counters.packets == 5)
        #expect(counters.skippedBytes == 4)
        // Glued in one read.
        var glued = SonyFrameReader()
        var gluedCounters = DriverCounters()
        #expect(glued.read(stream, counters: &gluedCounters) == items)
        #expect(gluedCounters == counters)
    }

    @Test func fourGiBLengthIsDroppedAtTheHeader() {
        var reader = SonyFrameReader()
        var counters = DriverCounters()
        let items = reader.read([0x3E, 0x0C, 0x00, 0xFF, 0xFF, 0xFF, 0xFF], counters: &counters)
        #expect(items == [.damaged(.oversized(declared: 0xFFFF_FFFF))])
        #expect(counters.oversized == 1)
        // The rest of it never fills memory; the next frame reads.
        #expect(reader.read(Array(repeating: 0x55, count: 100_000), counters: &counters).isEmpty)
        #expect(reader.bufferedCount == 0)
        #expect(reader.read(SonyFrame.encode(.ack, seq: 1, payload: []), counters: &counters).count == 1)
        #expect(counters.skippedBytes == 100_000 && counters.packets == 2)
    }

    @Test func missingEndMarkerNeverGrowsTheBuffer() {
        var reader = SonyFrameReader()
        var counters = DriverCounters()
        // Length 16, then a megabyte with no 3C.
        _ = reader.read([0x3E, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x10], counters: &counters)
        var maximum = 0
        for _ in 0..<1024 {
            _ = reader.read(Array(repeating: 0x41, count: 1024), counters: &counters)
            maximum = max(maximum, reader.bufferedCount)
        }
        #expect(maximum <= DriverLimits.maxSonyFrameBytes && maximum <= 16 + 7)
        #expect(counters.malformed == 1 && counters.packets == 1)
        // A new 3E before the 3C drops the partial frame and starts over.
        var cut = SonyFrameReader()
        var cutCounters = DriverCounters()
        let good = SonyFrame.encode(.table1, seq: 0, payload: [0x06, 0x00])
        let items = cut.read([0x3E, 0x0C, 0x00] + good, counters: &cutCounters)
        #expect(items == [.damaged(.cutShort), .frame(SonyFrame(type: 0x0C, seq: 0, payload: [0x06, 0x00]))])
        #expect(cutCounters.malformed == 1 && cutCounters.packets == 2)
    }
}
