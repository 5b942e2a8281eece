@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

/// The host-addresses event: when it counts as a change, its JSON line, its D-Bus signal.
@Suite("host-addresses event", .blockingCalls)
struct HostAddressesEventTests {
    static let configured = HostAddress(BluetoothAddress("66:55:44:33:22:11")!, from: [.config])
    static let adapter = HostAddress(BluetoothAddress("11:22:33:44:55:66")!, from: [.bluez(adapter: "hci0")])
    static let plugged = ControlWire.HostAddressesEvent(at: 1_763_800_000_200, from: [configured], to: [configured, adapter])!

    @Test("a change of the set or of an origin is a change; the same list is none")
    func whatChanges() throws {
        #expect(ControlWire.HostAddressesEvent(at: 1, from: [Self.configured, Self.adapter], to: [Self.configured, Self.adapter]) == nil)
        #expect(ControlWire.HostAddressesEvent(at: 1, from: [], to: []) == nil)
        #expect(Self.plugged.added == [Self.adapter.address.description])
        #expect(Self.plugged.removed == [])
        #expect(Self.plugged.addresses == [Self.configured, Self.adapter].map(ControlWire.HostAddressEntry.init))

        let unplugged = try #require(ControlWire.HostAddressesEvent(at: 1, from: [Self.configured, Self.adapter], to: [Self.configured]))
        #expect(unplugged.added == [] && unplugged.removed == [Self.adapter.address.description])

        // The adapter's address also put in the config: same set, another origin.
        let alsoConfigured = HostAddress(Self.adapter.address, from: [.config, .bluez(adapter: "hci0")])
        let origins = try #require(ControlWire.HostAddressesEvent(at: 1, from: [Self.adapter], to: [alsoConfigured]))
        #expect(origins.added == [] && origins.removed == [])
        #expect(origins.addresses == [ControlWire.HostAddressEntry(alsoConfigured)])
    }

    @Test("the JSON line is the one docs/control-protocol.md shows: keys sorted, every field present")
    func jsonLine() throws {
        let line = String(decoding: ControlWire.line(ControlWire.Event.hostAddresses(Self.plugged)), as: UTF8.self)
        let documented = try ControlProtocolDocTests.jsonExample(containing: #""event":"host-addresses""#)
        #expect(line == documented + "\n")

        let none = ControlWire.HostAddressesEvent(at: 7, addresses: [], added: [], removed: [])
        #expect(ControlWire.text(ControlWire.Event.hostAddresses(none))
            == #"{"added":[],"addresses":[],"at":7,"event":"host-addresses","removed":[]}"#)
    }

    @Test("a subscriber reads it as an event line")
    func subscribed() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            _ = try await client.request(#"{"id":1,"op":"subscribe"}"#)
            await fixture.control.emit(.hostAddresses(Self.plugged))
            let event = try await client.readJSON()
            #expect(event["event"] == .string("host-addresses"))
            #expect(event["added"] == .array([.string("11:22:33:44:55:66")]))
            #expect(event["addresses"] == .array([
                .object(["address": .string("66:55:44:33:22:11"), "from": .array([.string("config")])]),
                .object(["address": .string("11:22:33:44:55:66"), "from": .array([.string("bluez hci0")])]),
            ]))
        }
    }

    @Test("the D-Bus signal HostAddressesChanged: arguments as the XML declares them")
    func dbusSignal() throws {
        let signal = EarshotBusSignals.signals(for: .hostAddresses(Self.plugged))[0]
        #expect(signal.member == "HostAddressesChanged")
        #expect(signal.arguments == [
            .strings(["66:55:44:33:22:11 (config)", "11:22:33:44:55:66 (bluez hci0)"]), .strings(["11:22:33:44:55:66"]), .strings([]),
            .int64(1_763_800_000_200),
        ])
        #expect(signal.arguments.map(\.signature) == ["as", "as", "as", "x"])
        let xml = EarshotBusIntrospection.xml
        let declared = try #require(xml.range(of: #"<signal name="HostAddressesChanged">"#))
        let end = try #require(xml.range(of: "</signal>", range: declared.upperBound..<xml.endIndex))
        let types = xml[declared.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            guard let type = line.range(of: #"type=""#), let close = line[type.upperBound...].firstIndex(of: "\"") else { return nil }
            return String(line[type.upperBound..<close])
        }
        #expect(types == ["as", "as", "as", "x"])
    }
}
