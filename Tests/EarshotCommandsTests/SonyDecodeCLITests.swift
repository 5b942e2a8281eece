import AccessoryDrivers
@testable import EarshotCommands
import Foundation
import TestScheduling
import Testing

/// `earshot driver decode --family sony` / `sony-earbuds`. Frames: WH-CH720N btmon
/// (omarchy-headphones `docs/captures/sony-wh-ch720n.txt`, copy in kevinbsr/omarchy-soundcore-q30
/// at f8696fb4f29b303468080f7272361157da6747e7), maniacx/test-bluetooth-battery-meter simulator
/// frames (0485859a848985bbfaf3eb83173bb4a0eec75f03), and frames computed in the fact sheet from
/// omarchy-headphones `PROTOCOL.md` (393e9a2a452ee7ec1f82f4ae14dd7c4c1e468747) and
/// SonyHeadphonesClient `ProtocolV2T2.hpp` (30d1bc5f2c2a71a7fff3c288356653dd92c33e81).
@Suite("earshot driver decode: Sony", .blockingCalls)
struct SonyDecodeTests {
    static func decode(_ lines: [String], family: AccessoryFamily?) -> [String] {
        DriverDecodeTests.decode(lines, family: family)
    }

    static let headphones = AccessoryFamily.sony(.headphones, service: SonyServiceUUID.v2)
    static let earbuds = AccessoryFamily.sony(.earbuds, service: SonyServiceUUID.v2)

    @Test func headphoneCapture() {
        let output = Self.decode([
            "# WH-CH720N and the XM6 kind",
            "3e 0c 00 00 00 00 08 01 00 03 00 10 02 00 00 2a 3c",
            "3e 01 01 00 00 00 00 02 3c",
            "3e0c000000000423005500883c  # single 85 %",
            "3e 0c 00 00 00 00 03 f3 10 00 12 3c",
            "3e 0c 01 00 00 00 04 f5 10 01 01 18 3c",
            "3e 0e 01 00 00 00 03 f5 00 03 0a 3c",
            "3e 0c 01 00 00 00 07 67 17 01 01 01 00 14 a9 3c",
            "3e 0c 00 00 00 00 02 7e 00 8c 3c",
        ], family: Self.headphones)
        #expect(output == [
            #"{"kind":"protocol-info","packet":1,"version":2}"#,
            #"{"kind":"ack","packet":2,"seq":1}"#,
            #"{"components":[{"component":"headphone","level":85,"status":"discharging"}],"kind":"battery","packet":3}"#,
            #"{"kind":"wear","packet":4,"placement":"on-head"}"#,
            #"{"kind":"wear","packet":5,"placement":"off-head"}"#,
            #"{"kind":"wear","left":"worn","packet":6,"placement":"on-head","right":"not-worn"}"#,
            #"{"kind":"ignored","opcode":"0x67","packet":7}"#,
            #"{"kind":"unknown","opcode":"0x7E","packet":8}"#,
        ])
    }

    @Test func earbudCaptureAndSupportLists() {
        let output = Self.decode([
            "3e 0e 00 00 00 00 07 07 00 02 f0 00 f6 00 04 3c",
            "3e0c00000000082309640064006464d03c",
            "3e0c000000000825096400000064646e3c",
            "3e 0e 01 00 00 00 03 f5 00 02 09 3c",
            "3e 0c 01 00 00 00 04 f5 10 01 00 17 3c",
        ], family: Self.earbuds)
        #expect(output == [
            #"{"functions":["0xF0","0xF6"],"kind":"support-functions","packet":1,"table":2}"#,
            #"{"components":[{"component":"left","level":100,"status":"discharging"},{"component":"right","level":100,"status":"discharging"}],"kind":"battery","packet":2}"#,
            #"{"components":[{"component":"left","level":100,"status":"discharging"}],"kind":"battery","packet":3}"#,
            #"{"kind":"wear","left":"out-of-ear","packet":4,"placement":"in-ear","right":"in-ear"}"#,
            #"{"kind":"wear","left":"in-ear","packet":5,"placement":"in-ear","right":"in-ear"}"#,
        ])
    }

    @Test func handshakeReplyDecidesTheVersion() {
        // v2 until a reply says otherwise: `13` is a COMMON status on v2, the battery push on v1.
        let push = "3e 0c 00 00 00 00 04 13 00 46 01 6a 3c"
        let output = Self.decode([push, "3e 0c 01 00 00 00 04 01 00 70 00 82 3c", push], family: Self.headphones)
        #expect(output == [
            #"{"kind":"ignored","opcode":"0x13","packet":1}"#,
            #"{"kind":"protocol-info","packet":2,"version":1}"#,
            #"{"components":[{"component":"headphone","level":70,"status":"charging"}],"kind":"battery","packet":3}"#,
        ])
    }

    @Test func badFramesAreNamedAndNeverPlace() {
        let output = Self.decode([
            "3e 0c 00 00 00 00 03 f3 10 00 13 3c",
            "3e 0c 00 00 00 00 04 f3 10 00 12 3c",
            "3e 0c 00 00 00 00 03 f5 00 04 08 3c",
            "3e 0e 01 00 00 00 04 f5 10 01 01 1a 3c",
            "3e 0c 00 00 00 00 03 f3 10 3d 11 12 3c",
            "3e 0c 00 ff ff ff ff",
            "3e 0c 00 00 00 00 03 f3 10 00 12",
            "3e 0c 00 00 00 00 03 f3 10 00 12 3c 3e 0c 01 00 00 00 04 f5 10 01 01 18 3c",
            "00 11 22",
        ], family: Self.headphones)
        #expect(output == [
            #"{"kind":"malformed","packet":1,"why":"bad checksum (carried 0x13, computed 0x12)"}"#,
            #"{"kind":"malformed","packet":2,"why":"bad length (the header says 4 bytes, 3 came)"}"#,
            #"{"kind":"malformed","packet":3,"why":"wrong table: table-2 wearing status (0xF5 00) on table 1"}"#,
            #"{"kind":"malformed","packet":4,"why":"wrong table: table-1 wear status (0xF5 10) on table 2"}"#,
            #"{"kind":"malformed","packet":5,"why":"bad escape (3D followed by 0x11)"}"#,
            #"{"kind":"malformed","packet":6,"why":"oversized (length 4294967295 over the 2048-byte cap)"}"#,
            // The frame without its 3C ends no frame on its line (no number); the next line's
            // start marker cuts it short.
            #"{"kind":"malformed","packet":7,"why":"bad length (a new start marker came before the end marker)"}"#,
            #"{"kind":"wear","packet":8,"placement":"on-head"}"#,
            #"{"kind":"wear","packet":9,"placement":"off-head"}"#,
            #"{"kind":"malformed","packet":10,"why":"skipped 3 bytes outside any frame"}"#,
        ])
    }

    @Test func framesNumberedAcrossLinesAndALastFrameWithoutEndMarkerIsReported() {
        // A frame split over two lines takes one number; the input ends inside the last frame.
        let output = Self.decode([
            "3e 0c 00 00 00 00 03",
            "f3 10 00 12 3c",
            "> 3e 01 01 00 00 00 00 02 3c",
            "3e 0c 01 00 00 00 04 f5 10 01 01 18 3c",
            "3e 0c 01 00 00 00 04 f5 10",
        ], family: Self.headphones)
        #expect(output == [
            #"{"kind":"wear","packet":1,"placement":"on-head"}"#,
            #"{"kind":"sent","packet":2}"#,
            #"{"kind":"wear","packet":3,"placement":"off-head"}"#,
            #"{"kind":"malformed","packet":4,"why":"no end marker (the input ended inside a frame)"}"#,
        ])
        // Each device's held frame, in the order the devices came, with its address.
        let mixed = Self.decode([
            "AA:BB:CC:DD:EE:01 sony < 3e 0c 00",
            "AA:BB:CC:DD:EE:02 sony-earbuds < 3e 0e",
            "AA:BB:CC:DD:EE:01 sony < 3e 0c 00 00 00 00 03 f3 10 00 12 3c",
            "AA:BB:CC:DD:EE:01 sony < 3e",
        ], family: nil)
        #expect(mixed == [
            #"{"accessory":"AA:BB:CC:DD:EE:01","kind":"malformed","packet":1,"why":"bad length (a new start marker came before the end marker)"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:01","kind":"wear","packet":2,"placement":"on-head"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:01","kind":"malformed","packet":3,"why":"no end marker (the input ended inside a frame)"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:02","kind":"malformed","packet":4,"why":"no end marker (the input ended inside a frame)"}"#,
        ])
    }

    @Test func decodesAFileWithEitherFamily() throws {
        let file = try EarshotBinary.temporaryFile("sony.log", """
            # XM6 kind: worn, then taken off
            3e 0c 00 00 00 00 03 f3 10 00 12 3c
            AA:BB:CC:DD:EE:FF sony 2026-11-22T23:04:05.200Z < 3e 0c 01 00 00 00 04 f5 10 01 01 18 3c
            AA:BB:CC:DD:EE:FF sony 2026-11-22T23:04:05.300Z > 3e 01 00 00 00 00 00 01 3c

            """)
        let headphones = try EarshotBinary.run(["driver", "decode", "--family", "sony", file])
        #expect(headphones.status == 0, "\(headphones.standardError)")
        #expect(headphones.standardOutput.split(separator: "\n") == [
            #"{"kind":"wear","packet":1,"placement":"on-head"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:FF","kind":"wear","packet":2,"placement":"off-head"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:FF","kind":"sent","packet":3}"#,
        ])
        let earbuds = try EarshotBinary.run(["driver", "decode", "--family", "sony-earbuds", file])
        #expect(earbuds.standardOutput.split(separator: "\n").first == #"{"kind":"wear","left":"in-ear","packet":1,"placement":"in-ear","right":"in-ear"}"#)
        let help = try EarshotBinary.run(["driver", "decode", "--help"])
        #expect(help.standardOutput.contains("sony-earbuds"))
    }
}
