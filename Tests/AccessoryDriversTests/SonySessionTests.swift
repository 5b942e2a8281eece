import RoutingPolicy
import Testing
@testable import AccessoryDrivers

/// Start-up, sequencing and deadlines. Frame layouts: omarchy-headphones `PROTOCOL.md`
/// (c05b4698238b840366f6f00bd57daad804707e2f), SonyHeadphonesClient `src/ProtocolV2T1.h`
/// (0d892d1f87891d97f6ae51975a748563ac30fd96).
struct SonySessionTests {
    @Test func startSendsTheGoldenHandshake() {
        var session = SonySession(form: .headphones)
        #expect(session.start() == [.send(SonyVectors.handshake)])
        #expect(session.deadline?.after == SonySession.handshakeWait)
        #expect(session.start().isEmpty)
    }

    @Test func unansweredHandshakeIsBoundedAndSaysReconnectOnce() {
        var session = SonySession(form: .headphones)
        var outputs = session.start()
        for _ in 0..<10 {
            guard let deadline = session.deadline else { break }
            outputs += session.timeout(generation: deadline.generation)
        }
        #expect(outputs.sent == Array(repeating: SonyVectors.handshake, count: 3))
        #expect(outputs.filter { if case .reconnect = $0 { true } else { false } } == [.reconnect("no answer to the MDR handshake")])
        #expect(session.deadline == nil && session.stage == .gaveUp)
        // A stale generation does nothing.
        #expect(session.timeout(generation: 0).isEmpty)
    }

    @Test func v2StartUpAsksSupportBatteryLogAndWear() {
        var session = SonySession(form: .headphones)
        var set = ScriptedSony([
            (.table1, [0x00, 0x00], SonyVectors.v2Info),
            (.table1, [0x06, 0x00], SonyVectors.support([0x12, 0x20, 0x28])),
            (.table2, [0x06, 0x00], SonyVectors.support([0x30])),
            (.table1, [0x22, 0x08], [0x23, 0x08, 0x55, 0x00, 0x1E]),
            (.table1, [0xF2, 0x10], [0xF3, 0x10, 0x00]),
        ])
        let outputs = set.converse(&session, from: session.start())
        #expect(set.requests.map(\.1) == [[0x00, 0x00], [0x06, 0x00], [0x06, 0x00], [0x22, 0x08], [0xC4, 0x01, 0x00], [0xF2, 0x10]])
        #expect(set.requests.map(\.0) == [.table1, .table1, .table2, .table1, .table1, .table1])
        #expect(session.version == .v2 && session.wearMethod == .table1Status && session.stage == .running)
        #expect(outputs.batteries == [BatteryReport(headset: BatteryLevel(percent: 85, isCharging: false))])
        #expect(outputs.placements == [.onHead])
        #expect(outputs.wearSupports == [.reported(how: "table-1 wear status")])
        #expect(session.deadline == nil)
        #expect(session.counters.isConsistent && session.counters.malformed == 0 && session.counters.unknownOpcodes == 0)
    }

    @Test func commandsTakeTheSeqTheAckCarried() {
        var session = SonySession(form: .headphones)
        _ = session.start()
        // ACK 1, then the reply: the support request goes out with seq 1.
        let outputs = session.receive(bytes: sonyAck(1) + sonyFrame(.table1, seq: 1, SonyVectors.v2Info))
        #expect(outputs.acks.map(\.seq) == [0])
        let command = try! #require(outputs.sent.last.flatMap { sonyFrames($0).first })
        #expect(command.seq == 1 && command.payload == [0x06, 0x00])
        // Its ACK (seq 0) lets the next go with seq 0; an ACK is never ACKed.
        let next = session.receive(bytes: sonyAck(0) + sonyFrame(.table1, seq: 0, SonyVectors.support([])))
        #expect(next.acks.map(\.seq) == [1])
        #expect(next.sent.flatMap(sonyFrames).filter { $0.type == 0x0E }.map(\.seq) == [0])
    }

    @Test func ackStormAndStraySeqsSendNothing() {
        var session = SonySession(form: .headphones)
        _ = session.start()
        _ = session.receive(bytes: sonyAck(1) + sonyFrame(.table1, seq: 1, SonyVectors.v2Info))
        let generation = session.deadline?.generation
        // The support request went with seq 1: an ACK with seq 1 is stray; so are 1000 more.
        var storm: [UInt8] = []
        for index in 0..<1000 { storm += sonyAck(index % 3 == 0 ? 1 : 7) }
        let outputs = session.receive(bytes: storm)
        #expect(outputs.sent.isEmpty)
        #expect(outputs.notes.count == 1)
        #expect(session.counters.ignored == 1000 && session.counters.isConsistent)
        #expect(session.deadline?.generation == generation)
    }

    @Test func unackedCommandIsResentTwiceThenDroppedAndTheQueueGoesOn() {
        var session = SonySession(form: .earbuds)
        _ = session.start()
        // v1: support, then the fallback batteries (L/R, case): no wear message.
        _ = session.receive(bytes: sonyAck(1) + sonyFrame(.table1, seq: 1, SonyVectors.v1Info))
        var outputs: [DriverOutput] = []
        for _ in 0..<3 {
            let deadline = try! #require(session.deadline)
            #expect(deadline.after == SonySession.ackWait)
            outputs += session.timeout(generation: deadline.generation)
        }
        let support = SonyFrame.encode(.table1, seq: 1, payload: [0x06, 0x00])
        #expect(Array(outputs.sent.prefix(2)) == [support, support])
        #expect(outputs.notes.contains { $0.contains("no ACK") })
        // Dropped: the batteries go on, the first one with the seq of the last ACK received
        // (omarchy-headphones `sony-bridge`, Gadgetbridge `SonyHeadphonesProtocol`): unchanged.
        let next = try! #require(outputs.sent.last.flatMap { sonyFrames($0).first })
        #expect(next.payload == [0x10, 0x01] && next.seq == 1)
        let rest = session.receive(bytes: sonyAck(0))
        #expect(rest.commands == [[0x10, 0x02]])
    }

    @Test func supportListOnTheOtherTableStartsUpOnce() {
        var session = SonySession(form: .headphones)
        _ = session.start()
        _ = session.receive(bytes: sonyAck(1) + sonyFrame(.table1, seq: 1, SonyVectors.v1Info))
        // The table-1 list is awaited; a hostile set sends one on table 2: start-up finishes.
        _ = session.receive(bytes: sonyAck(0))
        var outputs = session.receive(bytes: sonyFrame(.table2, seq: 0, SonyVectors.support([])))
        var all = outputs
        // ACK every command, let every deadline pass: the stale table-1 wait must not start up again.
        for _ in 0..<16 {
            if let command = outputs.sent.flatMap(sonyFrames).last(where: { $0.type != 0x01 }) {
                outputs = session.receive(bytes: sonyAck(SonyFrame.otherSeq(command.seq)))
            } else if let deadline = session.deadline {
                outputs = session.timeout(generation: deadline.generation)
            } else {
                break
            }
            all += outputs
        }
        #expect(all.commands == [[0x10, 0x00]])
        #expect(session.stage == .running && session.deadline == nil)
    }

    @Test func supportListThatNeverComesFallsBackByForm() {
        var session = SonySession(form: .headphones)
        _ = session.start()
        _ = session.receive(bytes: sonyAck(1) + sonyFrame(.table1, seq: 1, SonyVectors.v2InfoNoTable2))
        _ = session.receive(bytes: sonyAck(0))
        let deadline = try! #require(session.deadline)
        #expect(deadline.after == SonySession.supportWait)
        let outputs = session.timeout(generation: deadline.generation)
        #expect(outputs.commands == [[0x22, 0x00]])
    }

    @Test func batteryRequestsFollowTheSupportList() {
        typealias R = SonyBatteryRequests
        #expect(R.payloads(version: .v2, functions: [0x29, 0x21, 0x2A, 0x22], form: .earbuds) == [[0x22, 0x09], [0x22, 0x0A]])
        #expect(R.payloads(version: .v2, functions: [0x21, 0x22], form: .earbuds) == [[0x22, 0x01], [0x22, 0x02]])
        #expect(R.payloads(version: .v2, functions: [0x20], form: .earbuds) == [[0x22, 0x00]])
        #expect(R.payloads(version: .v2, functions: [0x28, 0x20], form: .headphones) == [[0x22, 0x08]])
        #expect(R.payloads(version: .v2, functions: [0xF0], form: .headphones) == [[0x22, 0x00]])
        #expect(R.payloads(version: .v2, functions: [], form: .earbuds) == [[0x22, 0x01], [0x22, 0x02]])
        #expect(R.payloads(version: .v1, functions: [0x11, 0x15, 0x18], form: .headphones) == [[0x10, 0x00], [0x10, 0x01], [0x10, 0x02]])
        #expect(R.payloads(version: .v1, functions: [], form: .headphones) == [[0x10, 0x00]])
        #expect(R.payloads(version: .v1, functions: [], form: .earbuds) == [[0x10, 0x01], [0x10, 0x02]])
    }

    @Test func v1SetReportsNoWearAndReadsBattery() {
        var session = SonySession(form: .headphones)
        var set = ScriptedSony([
            (.table1, [0x00, 0x00], SonyVectors.v1Info),
            (.table1, [0x06, 0x00], SonyVectors.support([0x11])),
            (.table1, [0x10, 0x00], [0x11, 0x00, 0x46, 0x01]),
        ])
        let outputs = set.converse(&session, from: session.start())
        #expect(set.requests.map(\.1) == [[0x00, 0x00], [0x06, 0x00], [0x10, 0x00]])
        #expect(session.version == .v1 && session.wearMethod == nil)
        #expect(outputs.batteries == [BatteryReport(headset: BatteryLevel(percent: 70, isCharging: true))])
        #expect(outputs.placements.isEmpty)
        guard case .notReported(let why)? = outputs.wearSupports.first else {
            Issue.record("no wear support said: \(outputs)")
            return
        }
        #expect(why.contains("v1") && outputs.wearSupports.count == 1)
        // v1 push `13`.
        let push = session.receive(bytes: sonyFrame(.table1, seq: 0, [0x13, 0x00, 0x45, 0x00]))
        #expect(push.batteries == [BatteryReport(headset: BatteryLevel(percent: 69, isCharging: false))])
    }

    @Test func handshakeReplyOfAnotherLengthIsMalformed() {
        var session = SonySession(form: .headphones)
        _ = session.start()
        let outputs = session.receive(bytes: sonyFrame(.table1, seq: 0, [0x01, 0x00, 0x03]))
        #expect(outputs.acks.count == 1 && session.stage == .handshaking && session.counters.malformed == 1)
    }
}
