import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// Wear and battery. Table 1 (WH-1000XM6): omarchy-headphones `PROTOCOL.md` / `sony-bridge`
/// (393e9a2a452ee7ec1f82f4ae14dd7c4c1e468747). Table 2 WEARING_STATUS_CHECKER: SonyHeadphonesClient
/// `libmdr/include/mdr/ProtocolV2T2.hpp` (30d1bc5f2c2a71a7fff3c288356653dd92c33e81). Battery frames:
/// maniacx/test-bluetooth-battery-meter `ext-test-server-*.js` (0485859a848985bbfaf3eb83173bb4a0eec75f03).
struct SonyWearTests {
    /// A session running after a v2 start-up (`table2` offers the wearing status checker).
    static func running(form: SonyForm, rule: WearRule = .either, table2Checker: Bool, wearAnswer: [UInt8]? = nil) -> (SonySession, [DriverOutput]) {
        var session = SonySession(form: form, rule: rule)
        var answers: [(SonyFrame.Kind, [UInt8], [UInt8])] = [
            (.table1, [0x00, 0x00], SonyVectors.v2Info),
            (.table1, [0x06, 0x00], SonyVectors.support([0x21, 0x22])),
            (.table2, [0x06, 0x00], SonyVectors.support(table2Checker ? [0xF0, 0xF6] : [0x30])),
        ]
        if let wearAnswer { answers.append(table2Checker ? (.table2, [0xF2, 0x00], wearAnswer) : (.table1, [0xF2, 0x10], wearAnswer)) }
        var set = ScriptedSony(answers)
        let outputs = set.converse(&session, from: session.start())
        return (session, outputs)
    }

    static let table2Codes: [(UInt8, BudPair)] = [
        (0, BudPair(.inEar, .inEar)), (1, BudPair(.unrecognized, .unrecognized)), (2, BudPair(.outOfEar, .inEar)),
        (3, BudPair(.inEar, .outOfEar)), (4, BudPair(.outOfEar, .outOfEar)), (9, BudPair(.unrecognized, .unrecognized)),
    ]

    @Test(arguments: table2Codes)
    func table2CodesForEarbudsUnderBothRules(code: UInt8, sides: BudPair) {
        for rule in WearRule.allCases {
            var (session, start) = Self.running(form: .earbuds, rule: rule, table2Checker: true, wearAnswer: [0xF3, 0x00, 0x04])
            #expect(session.wearMethod == .table2Checker)
            #expect(start.wearSupports == [.reported(how: "table-2 wearing status checker")])
            #expect(start.placements == [.offHead])
            let outputs = session.receive(bytes: sonyFrame(.table2, seq: 1, [0xF5, 0x00, code]))
            #expect(session.sides == sides)
            let expected = sides.placement(rule: rule)
            #expect(outputs.placements == (expected == nil || expected == .offHead ? [] : [expected!]))
            #expect(session.counters.unknownValues == (code == 9 ? 1 : 0))
        }
    }

    @Test func table2CodesForHeadphones() {
        // One cup lifted is still on the head; only both off is off-head; 1 (ILLEGAL) says nothing.
        let expected: [UInt8: Placement?] = [0: .onHead, 2: .onHead, 3: .onHead, 4: .offHead, 1: nil]
        for (code, placement) in expected {
            #expect(SonyWearReading.table2(code: code).placement(form: .headphones, rule: .both) == placement)
        }
        var (session, start) = Self.running(form: .headphones, table2Checker: true, wearAnswer: [0xF3, 0x00, 0x02])
        #expect(start.placements == [.onHead])
        #expect(session.receive(bytes: sonyFrame(.table2, seq: 1, [0xF5, 0x00, 0x01])).placements.isEmpty)
        #expect(session.receive(bytes: sonyFrame(.table2, seq: 0, [0xF5, 0x00, 0x04])).placements == [.offHead])
    }

    @Test func table1PushesAsTheXM6SendsThem() {
        var (session, start) = Self.running(form: .headphones, table2Checker: false, wearAnswer: [0xF3, 0x10, 0x00])
        #expect(start.placements == [.onHead])
        // Computed frames of the fact sheet (§6.4a).
        let off = session.receive(bytes: sonyBytes("3e 0c 01 00 00 00 04 f5 10 01 01 18 3c"))
        #expect(off.placements == [.offHead] && off.acks.map(\.seq) == [0])
        let on = session.receive(bytes: sonyBytes("3e 0c 00 00 00 00 04 f5 10 01 00 16 3c"))
        #expect(on.placements == [.onHead])
        // The same state again: nothing.
        #expect(session.receive(bytes: sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x00])).placements.isEmpty)
        var (buds, _) = Self.running(form: .earbuds, table2Checker: false, wearAnswer: [0xF3, 0x10, 0x01])
        #expect(buds.sides == BudPair(.outOfEar, .outOfEar))
        #expect(buds.receive(bytes: sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x00])).placements == [.inEar])
    }

    @Test func wearOnTheWrongTableIsMalformedNeverAPlacement() {
        var (session, _) = Self.running(form: .headphones, table2Checker: true, wearAnswer: [0xF3, 0x00, 0x00])
        let onTable1 = session.receive(bytes: sonyFrame(.table1, seq: 1, [0xF5, 0x00, 0x04]) + sonyFrame(.table1, seq: 0, [0xF5, 0x00, 0x04]))
        let onTable2 = session.receive(bytes: sonyFrame(.table2, seq: 1, [0xF5, 0x10, 0x01, 0x01]))
        #expect((onTable1 + onTable2).placements.isEmpty)
        #expect(session.counters.malformed == 3 && session.counters.isConsistent)
        #expect(onTable1.notes.count == 1 && onTable1.notes[0].contains("wrong table"))
    }

    @Test func setThatOnlyAcksTheWearRequestReportsNoWear() {
        // The WH-CH520 ACKs `f2 10` and stays silent (omarchy-headphones PROTOCOL.md @ 393e9a2a).
        var (session, start) = Self.running(form: .headphones, table2Checker: false)
        #expect(start.wearSupports.isEmpty && start.placements.isEmpty)
        let deadline = try! #require(session.deadline)
        #expect(deadline.after == SonySession.wearAnswerWait)
        let outputs = session.timeout(generation: deadline.generation)
        guard case .notReported(let why)? = outputs.wearSupports.first else {
            Issue.record("\(outputs)")
            return
        }
        #expect(why.contains("f2 10".uppercased()) && outputs.placements.isEmpty)
        #expect(session.deadline == nil)
        // A push later flips it to reported, and is read.
        let push = session.receive(bytes: sonyFrame(.table1, seq: 0, [0xF5, 0x10, 0x01, 0x01]))
        #expect(push.wearSupports == [.reported(how: "table-1 wear status")] && push.placements == [.offHead])
        // Said once.
        #expect(session.receive(bytes: sonyFrame(.table1, seq: 1, [0xF5, 0x10, 0x01, 0x00])).wearSupports.isEmpty)
    }

    @Test func wearLogEntryReadsWearAgainBounded() {
        // The WH-1000XM6 never pushes the table-2 checker; it logs `unitWear` / `unitRemove`
        // (SonyHeadphonesClient PR #63): each such entry reads it again.
        var (session, _) = Self.running(form: .headphones, table2Checker: true, wearAnswer: [0xF3, 0x00, 0x00])
        let log = [0xC9, 0x01, 0x0A] + Array("unitRemove".utf8)
        var outputs = session.receive(bytes: sonyFrame(.table1, seq: 0, log))
        #expect(outputs.commands == [[0xF2, 0x00]])
        // More log pushes while that read is pending: at most one more read, later.
        for index in 0..<50 { outputs += session.receive(bytes: sonyFrame(.table1, seq: UInt8(index & 1), log)) }
        #expect(outputs.commands == [[0xF2, 0x00]])
        let request = try! #require(outputs.sent.flatMap(sonyFrames).first { $0.type == 0x0E })
        var answer = session.receive(bytes: sonyAck(SonyFrame.otherSeq(request.seq)) + sonyFrame(.table2, seq: 0, [0xF3, 0x00, 0x04]))
        #expect(answer.placements == [.offHead])
        #expect(answer.commands == [[0xF2, 0x00]])
        answer = session.receive(bytes: sonyAck(request.seq) + sonyFrame(.table2, seq: 1, [0xF3, 0x00, 0x04]))
        #expect(answer.commands.isEmpty && answer.placements.isEmpty)
        // A log entry naming no wear is only ignored.
        let other = session.receive(bytes: sonyFrame(.table1, seq: 0, [0xC9, 0x01, 0x03] + Array("key".utf8)))
        #expect(other.commands.isEmpty)
        #expect(session.counters.isConsistent)
    }

    @Test func batteryLayouts() {
        var (session, start) = Self.running(form: .earbuds, table2Checker: true)
        #expect(start.batteries.isEmpty)
        // maniacx simulator frames: L/R+threshold 100/100; case+threshold 55 %; NTFY L100, R0 (absent).
        let lr = session.receive(bytes: sonyBytes("3e0c00000000082309640064006464d03c"))
        #expect(lr.batteries == [BatteryReport(left: BatteryLevel(percent: 100, isCharging: false), right: BatteryLevel(percent: 100, isCharging: false))])
        let withCase = session.receive(bytes: sonyBytes("3e0c0100000005230a37001e943c"))
        #expect(withCase.batteries.last?.chargingCase == BatteryLevel(percent: 55, isCharging: false))
        let rightGone = session.receive(bytes: sonyBytes("3e0c000000000825096400000064646e3c"))
        #expect(rightGone.batteries.last?.right == nil && rightGone.batteries.last?.left?.percent == 100)
        // Repeated: nothing.
        #expect(session.receive(bytes: sonyBytes("3e0c000000000825096400000064646e3c")).batteries.isEmpty)
        // Charging 01 true, 02 unknown, 03 charged (not charging); a level over 100 left out.
        let mixed = session.receive(bytes: sonyFrame(.table1, seq: 1, [0x25, 0x01, 0x32, 0x01, 0x28, 0x02]))
        #expect(mixed.batteries.last?.left == BatteryLevel(percent: 50, isCharging: true))
        #expect(mixed.batteries.last?.right == BatteryLevel(percent: 40, isCharging: nil))
        let charged = session.receive(bytes: sonyFrame(.table1, seq: 0, [0x25, 0x02, 0x64, 0x03]))
        #expect(charged.batteries.last?.chargingCase == BatteryLevel(percent: 100, isCharging: false))
        let impossible = session.receive(bytes: sonyFrame(.table1, seq: 1, [0x25, 0x01, 0xC8, 0x00, 0x28, 0x07]))
        #expect(impossible.batteries.last?.left == nil && impossible.batteries.last?.right == BatteryLevel(percent: 40, isCharging: nil))
        #expect(session.counters.unknownValues == 2)
        let truncated = session.receive(bytes: sonyFrame(.table1, seq: 0, [0x23, 0x09, 0x64]))
        #expect(truncated.batteries.isEmpty && session.counters.malformed == 1)
        // Single (WH-1000XM6 simulator file): headset.
        var (headphones, _) = Self.running(form: .headphones, table2Checker: false)
        #expect(headphones.receive(bytes: sonyBytes("3e0c000000000423005500883c")).batteries == [BatteryReport(headset: BatteryLevel(percent: 85, isCharging: false))])
        #expect(headphones.receive(bytes: sonyBytes("3e0c0100000004250054008a3c")).batteries == [BatteryReport(headset: BatteryLevel(percent: 84, isCharging: false))])
    }

    @Test func batteryReportThatEmptiesIsSaid() {
        // Both buds at 0 (absent) and no case read: no level left; the daemon must drop the last.
        var (earbuds, _) = Self.running(form: .earbuds, table2Checker: true)
        let levels = earbuds.receive(bytes: sonyFrame(.table1, seq: 0, [0x25, 0x01, 0x32, 0x00, 0x28, 0x00]))
        #expect(levels.batteries.count == 1)
        #expect(earbuds.receive(bytes: sonyFrame(.table1, seq: 1, [0x25, 0x01, 0x00, 0x00, 0x00, 0x00])).batteries == [BatteryReport()])
        #expect(earbuds.receive(bytes: sonyFrame(.table1, seq: 0, [0x25, 0x01, 0x00, 0x00, 0x00, 0x00])).batteries.isEmpty)
        // A single level over 100: no level either.
        var (headphones, _) = Self.running(form: .headphones, table2Checker: false)
        _ = headphones.receive(bytes: sonyFrame(.table1, seq: 0, [0x25, 0x00, 0x55, 0x00]))
        #expect(headphones.receive(bytes: sonyFrame(.table1, seq: 1, [0x25, 0x00, 0xC8, 0x00])).batteries == [BatteryReport()])
    }

    @Test func knownPushesAreIgnoredUnknownOpcodesNotedOnce() {
        var (session, _) = Self.running(form: .headphones, table2Checker: false, wearAnswer: [0xF3, 0x10, 0x00])
        let before = session.counters
        var outputs: [DriverOutput] = []
        for push: [UInt8] in [[0x69, 0x19, 0x01], [0x15, 0x02, 0x01], [0xA5, 0x00], [0xF9, 0x01, 0x01], [0xC9, 0x00, 0x01, 0x41]] {
            outputs += session.receive(bytes: sonyFrame(.table1, seq: 0, push))
        }
        #expect(session.counters.ignored - before.ignored == 5 && outputs.notes.isEmpty && outputs.acks.count == 5)
        for _ in 0..<5 { outputs += session.receive(bytes: sonyFrame(.table1, seq: 0, [0x7E, 0x00])) }
        #expect(session.counters.unknownOpcodes == 1 + before.unknownOpcodes + 4 && outputs.notes.count == 1)
        #expect(session.counters.isConsistent)
    }
}
