@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotDaemon
import Foundation
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

/// The calls' events (§8): `stream-moved` and `call-source`, their JSON lines, how a client
/// reads them, the StreamMoved signal and CallSource's PropertiesChanged. (A subscriber gets
/// each event's `ControlWire.line`, as HostAddressesEventTests shows for one.)
@Suite("calls events", .blockingCalls)
struct CallEventsTests {
    static let loopback = "bluez_input.AC:80:0A:CA:97:12"
    static let call = ControlWire.StreamMovedEvent(
        at: 1_763_800_000_300,
        move: StreamMove(kind: .call, stream: 401, serial: 1401, application: "Some Softphone", role: "Communication", from: nil, to: loopback))
    static let back = ControlWire.StreamMovedEvent(
        at: 7, move: StreamMove(kind: .back, stream: 402, serial: nil, application: nil, role: nil, from: loopback, to: nil))
    static let headsetOn = ControlWire.CallSourceEvent(at: 1_763_800_000_300, previous: nil, current: loopback)

    @Test("the JSON lines are the ones docs/control-protocol.md shows: keys sorted, every field present")
    func jsonLines() throws {
        let moved = String(decoding: ControlWire.line(ControlWire.Event.streamMoved(Self.call)), as: UTF8.self)
        #expect(moved == (try ControlProtocolDocTests.jsonExample(containing: #""event":"stream-moved""#)) + "\n")
        let source = String(decoding: ControlWire.line(ControlWire.Event.callSource(Self.headsetOn)), as: UTF8.self)
        #expect(source == (try ControlProtocolDocTests.jsonExample(containing: #""event":"call-source""#)) + "\n")
        #expect(ControlWire.text(ControlWire.Event.streamMoved(Self.back))
            == #"{"application":null,"at":7,"event":"stream-moved","from":"bluez_input.AC:80:0A:CA:97:12","kind":"back","role":null,"serial":null,"stream":402,"to":null}"#)
    }

    @Test("a client reads them typed; a kind from a newer daemon is kept, not refused; an unknown event stays whole")
    func decoding() throws {
        for event in [ControlWire.Event.streamMoved(Self.call), .streamMoved(Self.back), .callSource(Self.headsetOn)] {
            #expect(try JSONDecoder().decode(ControlWire.Event.self, from: ControlWire.line(event)) == event)
        }
        let newer = #"{"at":1,"event":"stream-moved","kind":"parked","stream":9,"to":null}"#
        guard case .streamMoved(let parked) = try JSONDecoder().decode(ControlWire.Event.self, from: Data(newer.utf8)) else {
            Issue.record("a stream-moved line with a newer kind is still a stream-moved")
            return
        }
        #expect(parked.move.kind.rawValue == "parked" && parked.move.kind.known == nil && parked.move.stream == 9 && parked.move.from == nil)
        let unknown = try JSONDecoder().decode(ControlWire.Event.self, from: Data(#"{"at":1,"event":"call-ended","stream":9}"#.utf8))
        #expect(unknown.name == "call-ended")
    }

    @Test("StreamMoved: arguments as the XML declares them, none as \"\" and 0; call-source is told by CallSource's PropertiesChanged alone")
    func dbus() throws {
        let signal = try #require(EarshotBusSignals.signals(for: .streamMoved(Self.call)).first)
        #expect(signal.member == "StreamMoved")
        #expect(signal.arguments == [
            .string("call"), .uint64(401), .uint64(1401), .string("Some Softphone"), .string("Communication"), .string(""), .string(Self.loopback),
            .int64(1_763_800_000_300),
        ])
        let back = try #require(EarshotBusSignals.signals(for: .streamMoved(Self.back)).first)
        #expect(back.arguments == [.string("back"), .uint64(402), .uint64(0), .string(""), .string(""), .string(Self.loopback), .string(""), .int64(7)])
        let types = ["s", "t", "t", "s", "s", "s", "s", "x"]
        #expect(signal.arguments.map(\.signature) == types)
        #expect(Self.declaredTypes(of: "StreamMoved") == types)
        #expect(EarshotBusProperty.changedSignal(for: .streamMoved(Self.call)) == nil)

        #expect(EarshotBusSignals.signals(for: .callSource(Self.headsetOn)).isEmpty)
        let changed = try #require(EarshotBusProperty.changedSignal(for: .callSource(Self.headsetOn)))
        #expect(changed == [.string("org.earshot.Earshot1"), .properties(["CallSource": .string(Self.loopback)]), .strings([])])
        let off = ControlWire.CallSourceEvent(at: 2, previous: Self.loopback, current: nil)
        #expect(EarshotBusProperty.changedSignal(for: .callSource(off))?[1] == .properties(["CallSource": .string("")]))
    }

    @Test("CallSource: the status's calls source, empty when none; read-only")
    func property() {
        var status = ControlWire.Status(mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "WirePlumber", decision: nil)
        #expect(EarshotBusProperty.callSource.value(in: status) == .string(""))
        status.calls = CallRoutingOutcome(source: Self.loopback)
        #expect(EarshotBusProperty.callSource.value(in: status) == .string(Self.loopback))
        #expect(EarshotBusProperty.all(in: status).dictionary?["CallSource"] == .string(Self.loopback))
    }

    /// The `type`s of a signal's `<arg>`s in the introspection XML.
    static func declaredTypes(of signal: String) -> [String] {
        let xml = EarshotBusIntrospection.xml
        guard let declared = xml.range(of: "<signal name=\"\(signal)\">"), let end = xml.range(of: "</signal>", range: declared.upperBound..<xml.endIndex)
        else { return [] }
        return xml[declared.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            guard let type = line.range(of: #"type=""#), let close = line[type.upperBound...].firstIndex(of: "\"") else { return nil }
            return String(line[type.upperBound..<close])
        }
    }
}
