import AccessoryDrivers
import AudioGraph
@testable import EarshotCommands
import Foundation
import TestScheduling
import Testing

/// `earshot driver decode`: the line decoder, the bounded line splitter, and the binary.
@Suite("earshot driver decode", .blockingCalls)
struct DriverDecodeTests {
    static func decode(_ lines: [String], family: AccessoryFamily?) -> [String] {
        var decoder = PacketLineDecoder(family: family)
        let records = lines.enumerated().flatMap { decoder.decode($1, line: $0 + 1) }
        return (records + decoder.finish()).map(\.jsonLine)
    }

    @Test func aapGoldenLines() {
        let output = Self.decode([
            "# a capture",
            "",
            "04 00 04 00 06 00 00 01",
            "2026-11-22T23:04:05.123Z < 0400040006000202  # both in the case",
            "AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.124Z > 04 00 04 00 0F 00 FF FF FF FF",
            "04 00 04 00 04 00 03 02 01 64 02 01 04 01 63 01 01 08 01 11 02 01",
            "04 00 04 00 2F 00 01",
            "04 00",
            "not hex at all",
            "00 00 04 00 01 00 02 00 00 00 00 00 00 00 00 00",
            "04 00 04 00 0E 00 66 55 44 33 22 11 02",
        ], family: .aap)
        #expect(output == [
            #"{"kind":"ear-detection","packet":1,"placement":"in-ear","primary":"in-ear","secondary":"out-of-ear"}"#,
            #"{"kind":"ear-detection","packet":2,"placement":"off-head","primary":"in-case","secondary":"in-case"}"#,
            #"{"accessory":"AA:BB:CC:DD:EE:FF","kind":"sent","packet":3}"#,
            #"{"components":[{"component":"right","level":100,"status":"discharging"},{"component":"left","level":99,"status":"charging"},{"component":"case","level":17,"status":"discharging"}],"kind":"battery","packet":4}"#,
            #"{"kind":"unknown","opcode":"0x002F","packet":5}"#,
            #"{"kind":"malformed","packet":6,"why":"2-byte packet, shorter than a header"}"#,
            #"{"kind":"malformed","packet":7,"why":"line 9: \"not\" is not hex"}"#,
            #"{"kind":"ignored","packet":8}"#,
            #"{"activity":"media","kind":"audio-source","packet":9,"source":"11:22:33:44:55:66"}"#,
        ])
    }

    @Test func galaxyFramesSpanLinesAndDevicesAreKeptApart() {
        let frame = GalaxyBudsFrame.encode(id: 0x60, payload: [0x0B, 80, 70, 0x01, 0x00, 0x12, 50], framing: .current)
        let hex = PacketLogLine.hexPairs(frame)
        let head = PacketLogLine.hexPairs(frame.prefix(4)), tail = PacketLogLine.hexPairs(frame.dropFirst(4))
        let left = "11:11:11:11:11:11 galaxy-buds2-or-later 2026-11-22T23:04:05.000Z <"
        let right = "22:22:22:22:22:22 galaxy-buds2-or-later 2026-11-22T23:04:05.001Z <"
        let expected = #"{"components":[{"component":"left","level":80,"status":"unknown"},{"component":"right","level":70,"status":"unknown"},{"component":"case","level":50,"status":"unknown"}],"kind":"ear-detection","left":"in-ear","packet":N,"placement":"in-ear","right":"out-of-ear"}"#
        // Without --family, each line's prefix names the family; the two devices' halves interleave.
        let output = Self.decode(["\(left) \(head)", "\(right) \(head)", "\(left) \(tail)", "\(right) \(tail) \(hex)"], family: nil)
        #expect(output == [
            expected.replacingOccurrences(of: "{\"components\"", with: "{\"accessory\":\"11:11:11:11:11:11\",\"components\"").replacingOccurrences(of: "N", with: "3"),
            expected.replacingOccurrences(of: "{\"components\"", with: "{\"accessory\":\"22:22:22:22:22:22\",\"components\"").replacingOccurrences(of: "N", with: "4"),
            expected.replacingOccurrences(of: "{\"components\"", with: "{\"accessory\":\"22:22:22:22:22:22\",\"components\"").replacingOccurrences(of: "N", with: "4"),
        ])
        // Bare hex needs --family.
        #expect(Self.decode([hex], family: nil) == [
            #"{"kind":"malformed","packet":1,"why":"line 1: no family: pass --family or prefix the line with an address and family"}"#,
        ])
        var bad = frame
        bad[bad.count - 2] ^= 0x01
        #expect(Self.decode([PacketLogLine.hexPairs(bad), "FD 03 00 77 00 00 DD"], family: .galaxyBuds(.secondGenerationOrLater)) == [
            // Only the start marker is given up: the rest of the damaged frame is skipped.
            #"{"kind":"malformed","packet":1,"why":"dropped 1 frame with a bad CRC"}"#,
            #"{"kind":"malformed","packet":1,"why":"skipped 13 bytes outside any frame"}"#,
            #"{"kind":"malformed","packet":2,"why":"dropped 1 frame with a bad CRC"}"#,
            #"{"kind":"malformed","packet":2,"why":"skipped 6 bytes outside any frame"}"#,
        ])
        let unknown = PacketLogLine.hexPairs(GalaxyBudsFrame.encode(id: 0x77, payload: [], framing: .current))
        #expect(Self.decode([unknown], family: .galaxyBuds(.plusLiveOrPro)) == [#"{"kind":"unknown","opcode":"0x77","packet":1}"#])
    }

    @Test func linesAreBoundedAndSplitAnywhere() {
        var splitter = LineSplitter(maximum: 8)
        #expect(splitter.take(Array("01 02\n0".utf8)) == [.text(Array("01 02".utf8), number: 1)])
        #expect(splitter.take(Array("3\n".utf8)) == [.text(Array("03".utf8), number: 2)])
        // Nine bytes without a newline: refused at once, the rest skipped up to the newline.
        #expect(splitter.take(Array("123456789".utf8)) == [.tooLong(number: 3)])
        #expect(splitter.take(Array("abcdef".utf8)) == [])
        #expect(splitter.take(Array("x\n04".utf8)) == [])
        #expect(splitter.finish() == .text(Array("04".utf8), number: 4))
        var decoder = PacketLineDecoder(family: .aap)
        #expect(decoder.decode(.tooLong(number: 3)).map(\.jsonLine) == [#"{"kind":"malformed","packet":1,"why":"line 3: longer than 65536 bytes; skipped"}"#])
    }
}

@Suite("earshot driver decode: the binary", .blockingCalls)
struct DriverDecodeCLITests {
    @Test func decodesAFileAsJSONLines() throws {
        let frame = GalaxyBudsFrame.encode(id: 0x61, payload: [0x02, 0x00, 0x4B, 0x5F, 0x01, 0x00, 0x11, 0x00], framing: .legacy)
        let file = try EarshotBinary.temporaryFile("capture.log", """
            # AirPods
            AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.123Z > 00 00 04 00 01 00 02 00 00 00 00 00 00 00 00 00
            AA:BB:CC:DD:EE:FF aap 2026-11-22T23:04:05.200Z < 04 00 04 00 06 00 01 01
            11:22:33:44:55:66 galaxy-buds 2026-11-22T23:04:06.000Z < \(PacketLogLine.hexPairs(frame))
            zz
            \(String(repeating: "00", count: 40_000))
            0400040006000000

            """)
        let result = try EarshotBinary.run(["driver", "decode", file])
        #expect(result.status == 0, "\(result.standardError)")
        let objects = try result.standardOutput.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        try #require(objects.count == 6)
        #expect(objects.map { $0["packet"] } == (1...6).map { .integer(Int64($0)) })
        #expect(objects[0]["kind"] == .string("sent"))
        #expect(objects[1]["placement"] == .string("off-head"))
        #expect(objects[1]["primary"] == .string("out-of-ear"))
        #expect(objects[2]["left"] == .string("in-ear"))
        #expect(objects[2]["right"] == .string("in-ear"))
        #expect(objects[2]["placement"] == .string("in-ear"))
        #expect(objects[3]["why"] == .string("line 5: \"zz\" is not hex"))
        #expect(objects[4]["why"] == .string("line 6: longer than 65536 bytes; skipped"))
        // A bare line without --family: no family to decode it with.
        #expect(objects[5]["kind"] == .string("malformed"))

        let forced = try EarshotBinary.run(["driver", "decode", "--family", "aap", file])
        let last = try JSONValue.parse(String(forced.standardOutput.split(separator: "\n").last ?? ""))
        #expect(last["primary"] == .string("in-ear"))
    }

    @Test func standardInputAndUnreadableInput() throws {
        let missing = "/nonexistent/earshot-capture.log"
        let result = try EarshotBinary.run(["driver", "decode", "--family", "aap", missing])
        #expect(result.status == 2)
        #expect(result.standardError.contains("cannot read \(missing)"))
        #expect(result.standardOutput.isEmpty)
        let directory = try EarshotBinary.run(["driver", "decode", "--family", "aap", NSTemporaryDirectory()])
        #expect(directory.status == 2)
        #expect(directory.standardError.contains("EISDIR"))
        let usage = try EarshotBinary.run(["driver", "decode", "--family", "airpods", missing])
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("aap, galaxy-buds"))
    }

    @Test func helpWrapsAsProse() throws {
        let help = try EarshotBinary.run(["driver", "decode", "--help"], environment: ["COLUMNS": "80"])
        #expect(help.status == 0)
        let lines = help.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("USAGE:") }
        #expect(lines.allSatisfy { $0.count <= 90 }, "\(lines.filter { $0.count > 90 })")
        #expect(help.standardOutput.contains("--family"))
        let group = try EarshotBinary.run(["--help"])
        #expect(group.standardOutput.contains("driver"))
    }
}
