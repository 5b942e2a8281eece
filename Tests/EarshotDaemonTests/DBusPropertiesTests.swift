import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotDaemon
import RoutingPolicy
import SystemBridge
import TestScheduling
import Testing

/// The properties of org.earshot.Earshot1: their values, the PropertiesChanged each event
/// implies, and that both agree with the introspection XML.
@Suite("D-Bus properties", .blockingCalls)
struct DBusPropertiesTests {
    static let adapter = HostAddress(BluetoothAddress("11:22:33:44:55:66")!, from: [.bluez(adapter: "hci0")])

    /// `<property name="NAME" type="T" …>` of the XML, with whether it is declared unsignalled.
    static func declared() -> [String: (type: String, signalled: Bool)] {
        var found: [String: (type: String, signalled: Bool)] = [:]
        let xml = EarshotBusIntrospection.xml
        var rest = xml[...]
        while let start = rest.range(of: "<property name=\"") {
            let end = rest.range(of: "</property>", range: start.upperBound..<rest.endIndex)?.upperBound ?? rest.endIndex
            let element = rest[start.upperBound..<end]
            let name = element.prefix { $0 != "\"" }
            let type = element.range(of: "type=\"").map { element[$0.upperBound...].prefix { $0 != "\"" } } ?? ""
            let quiet = element.contains(#"name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false""#)
            found[String(name)] = (String(type), !quiet)
            rest = rest[end...]
        }
        return found
    }

    @Test("each property's value has the type the XML declares; before the first decision DefaultSink is empty")
    func valuesMatchTheXML() {
        let status = ControlWire.Status(mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "wireplumber", decision: nil, hostAddresses: [ControlWire.HostAddressEntry(Self.adapter)])
        let declared = Self.declared()
        #expect(Set(declared.keys) == Set(EarshotBusProperty.allCases.map(\.rawValue)))
        for property in EarshotBusProperty.allCases {
            #expect(property.value(in: status).signature == declared[property.rawValue]?.type, "\(property)")
        }
        #expect(EarshotBusProperty.defaultSink.value(in: status) == .string(""))
        #expect(EarshotBusProperty.mode.value(in: status) == .string("cooperative"))
        #expect(EarshotBusProperty.connected.value(in: status) == .boolean(true))
        #expect(EarshotBusProperty.hostAddresses.value(in: status) == .strings(["11:22:33:44:55:66 (bluez hci0)"]))
        #expect(EarshotBusProperty.defaultSource.value(in: status) == .string(""))
        #expect(EarshotBusProperty.callSource.value(in: status) == .string(""))
        #expect(EarshotBusProperty.all(in: status).dictionary?.count == 6)
    }

    @Test("a route change signals DefaultSink, a host-address change HostAddresses, a call-source change CallSource; exactly the properties the XML says are signalled")
    func changedSignals() throws {
        let route = ControlWire.RouteChangeEvent(at: 1, reason: .placementChanged, previous: "alsa_output.pci", current: "bluez_output.AA_BB_CC_DD_EE_FF.1", accessory: nil, summary: "")
        let routed = try #require(EarshotBusProperty.changedSignal(for: .routeChange(route)))
        #expect(routed == [.string("org.earshot.Earshot1"), .properties(["DefaultSink": .string("bluez_output.AA_BB_CC_DD_EE_FF.1")]), .strings([])])
        #expect(routed.map(\.signature) == ["s", "a{sv}", "as"])
        let none = ControlWire.RouteChangeEvent(at: 1, reason: .noSuitableRoute, previous: "alsa_output.pci", current: nil, accessory: nil, summary: "")
        #expect(EarshotBusProperty.changedSignal(for: .routeChange(none))?[1] == .properties(["DefaultSink": .string("")]))

        let input = ControlWire.RouteChangeEvent(
            at: 1, reason: .placementChanged, previous: "alsa_input.pci", current: "bluez_input.AA_BB_CC_DD_EE_FF.0", accessory: nil, summary: "",
            direction: .input)
        let microphone = try #require(EarshotBusProperty.changedSignal(for: .routeChange(input)))
        #expect(microphone[1] == .properties(["DefaultSource": .string("bluez_input.AA_BB_CC_DD_EE_FF.0")]))
        #expect(EarshotBusSignals.signals(for: .routeChange(input))[0].member == "InputRouteChanged")
        #expect(EarshotBusSignals.signals(for: .routeChange(route))[0].member == "RouteChanged")
        #expect(EarshotBusSignals.signals(for: .routeChange(input)).count == 1)

        let plugged = try #require(ControlWire.HostAddressesEvent(at: 1, from: [], to: [Self.adapter]))
        let hosts = try #require(EarshotBusProperty.changedSignal(for: .hostAddresses(plugged)))
        #expect(hosts[1] == .properties(["HostAddresses": .strings(["11:22:33:44:55:66 (bluez hci0)"])]))

        let calls = try #require(EarshotBusProperty.changedSignal(for: .callSource(ControlWire.CallSourceEvent(at: 1, previous: nil, current: "bluez_input.AA:BB:CC:DD:EE:FF"))))
        #expect(calls[1] == .properties(["CallSource": .string("bluez_input.AA:BB:CC:DD:EE:FF")]))

        let signalled = Set([routed, microphone, hosts, calls].flatMap { $0[1].dictionary?.keys.map { $0 } ?? [] })
        #expect(signalled == Set(Self.declared().filter(\.value.signalled).keys))
    }
}
