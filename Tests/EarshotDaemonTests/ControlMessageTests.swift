@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import TestScheduling
import Testing

/// The Codable types of the control protocol against docs/control-protocol.md, which is the
/// contract: each server line the document shows is what its type writes, byte for byte, and
/// reads back as the same value; each request line is what the client's types send.
@Suite("control protocol messages", .blockingCalls)
struct ControlMessageTests {
    /// The example line of the document that starts with `arrow` and contains `marker`.
    static func documented(_ arrow: String, containing marker: String) throws -> String {
        let text = try String(contentsOf: ControlProtocolDocTests.document, encoding: .utf8)
        let lines = text.split(separator: "\n").filter { $0.hasPrefix(arrow + " ") && $0.contains(marker) }
        guard let line = lines.first else { throw Failure("no \(arrow) line with \(marker) in \(ControlProtocolDocTests.document.path)") }
        return String(line.dropFirst(arrow.count + 1))
    }

    static let address = AccessoryIdentity.address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!)
    static let worn = AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .onHead)

    /// The line `value` is written as, without its newline.
    static func line(_ value: some Encodable) -> String {
        String(decoding: ControlWire.line(value).dropLast(), as: UTF8.self)
    }

    /// The result a client reads from `line`.
    static func read<Result: Decodable>(_ type: Result.Type, from line: String) throws -> (id: JSONValue?, result: Result) {
        guard case .success(let id, let data) = try ControlWire.message(from: Data(line.utf8)) else { throw Failure("not a success: \(line)") }
        return (id, try ControlWire.result(type, from: data))
    }

    @Test("register and update replies: the accessory object, as documented")
    func accessoryReplies() throws {
        let registered = ControlWire.success(
            id: .integer(1), ControlWire.AccessoryResult(ControlWire.Accessory(Self.address, AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .offHead)), warnings: []))
        #expect(Self.line(registered) == (try Self.documented("←", containing: #""id":1,"#)))
        let updated = ControlWire.success(id: .integer(2), ControlWire.AccessoryResult(ControlWire.Accessory(Self.address, Self.worn)))
        let documented = try Self.documented("←", containing: #""id":2,"#)
        #expect(Self.line(updated) == documented)

        let (id, result) = try Self.read(ControlWire.AccessoryResult.self, from: documented)
        #expect(id == .integer(2))
        #expect(result == ControlWire.AccessoryResult(ControlWire.Accessory(Self.address, Self.worn)))
        #expect(result.accessory?.configuration.primarySource == nil)
    }

    @Test("unregister's null accessory, list's entries and subscribe's ok, as documented")
    func otherReplies() throws {
        let unregistered = ControlWire.success(id: .integer(5), ControlWire.AccessoryResult(nil))
        #expect(Self.line(unregistered) == (try Self.documented("←", containing: #""id":5,"#)))
        #expect(try Self.read(ControlWire.AccessoryResult.self, from: Self.line(unregistered)).result.accessory == nil)

        let registration = AccessoryRegistration(identity: Self.address, reporter: "org.example.r", configuration: Self.worn, registeredAt: 0)
        let listed = ControlWire.ListedAccessory(registration, stale: false, sinks: ["bluez_output.AA_BB_CC_DD_EE_FF.1"])
        let list = ControlWire.success(id: .integer(6), ControlWire.ListResult([listed]))
        let documented = try Self.documented("←", containing: #""id":6,"#)
        #expect(Self.line(list) == documented)
        #expect(try Self.read(ControlWire.ListResult.self, from: documented).result.accessories == [listed])

        let subscribed = ControlWire.success(id: .integer(8), ControlWire.SubscribeResult())
        #expect(Self.line(subscribed) == (try Self.documented("←", containing: #""subscribed""#)))
    }

    @Test("a refusal: the error's code and message, as documented; the client reads the code")
    func refusal() throws {
        let error = AccessoryError(.unknown, "no registration for 11:22:33:44:55:66 (Earshot may have restarted): register it, then update")
        let documented = try Self.documented("←", containing: #""ok":false"#)
        #expect(Self.line(ControlWire.failure(id: .integer(4), error)) == documented)
        #expect(try ControlWire.message(from: Data(documented.utf8)) == .failure(id: .integer(4), error))
        #expect(Self.line(ControlWire.failure(id: nil, error)).contains(#""id":null"#))
    }

    @Test("status: every field written, null before the first decision; a decision is DecisionRecord's JSON, written once")
    func status() throws {
        let host = HostAddress(BluetoothAddress("11:22:33:44:55:66")!, from: [.bluez(adapter: "hci0")])
        let before = ControlWire.Status(mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "WirePlumber", sessionManagerVersion: "0.5.8", decision: nil, hostAddresses: [ControlWire.HostAddressEntry(host)])
        #expect(Self.line(ControlWire.success(id: .integer(7), ControlWire.StatusResult(before)))
            == #"{"id":7,"ok":true,"status":{"calls":null,"connected":true,"decision":null,"diagnostics":{"switch-spans":[]},"drivers":[],"host-addresses":[{"address":"11:22:33:44:55:66","from":["bluez hci0"]}],"mode":"cooperative","playback":null,"remote":"pipewire-0","session-manager":"WirePlumber","session-manager-version":"0.5.8","state":"ok","subscribers":0}}"#)

        var engine = PolicyEngine(graph: Self.graph(), config: PolicyConfig())
        let decision = engine.handle(.start, at: 5120).decision
        let after = ControlWire.Status(mode: .standalone, remote: "pipewire-0", connected: true, sessionManager: nil, decision: .record(DecisionRecord(decision)))
        let line = Self.line(ControlWire.StatusResult(after))
        #expect(line.contains(#""decision":\#(DecisionRecord(decision).jsonLine),"#))
        let read = try JSONDecoder().decode(ControlWire.StatusResult.self, from: Data(line.utf8)).status
        #expect(read.decision?.json == (try JSONValue.parse(DecisionRecord(decision).jsonLine)))
        #expect(read.decision?.json == after.decision?.json)
        #expect(read.sessionManager == nil && read.mode == ApplyMode.standalone)
        // Written again by a client (`status --json`), it is the line it read.
        #expect(ControlWire.text(read) == ControlWire.text(after))

        // Since 0.4: calls (§8), written under their keys and read back as written.
        let calls = #"{"moves":[{"application":"Some Softphone","from":null,"kind":"call","role":"Communication","serial":1401,"stream":401,"to":"bluez_input.AC:80:0A:CA:97:12"}],"source":"bluez_input.AC:80:0A:CA:97:12","streams":[{"application":"Some Softphone","role":"Communication","serial":1401,"source":"bluez_input.AC:80:0A:CA:97:12","stream":401,"why":"media.role = Communication"}]}"#
        var calling = after
        calling.calls = try JSONDecoder().decode(CallRoutingOutcome.self, from: Data(calls.utf8))
        #expect(calling.calls?.streams.first?.stream == 401 && calling.calls?.moves.first?.kind == .call)
        let callLine = Self.line(ControlWire.StatusResult(calling))
        #expect(callLine.contains(#""calls":\#(calls),"#))
        #expect(try JSONDecoder().decode(ControlWire.StatusResult.self, from: Data(callLine.utf8)).status.calls == calling.calls)
    }

    static func graph() -> Graph {
        var graph = Graph()
        for (id, name) in [(40 as ObjectID, "alsa_output.pci.analog-stereo"), (41, "alsa_output.usb-dac.analog-stereo")] {
            graph.apply(.node(Node(id: id, state: .suspended, props: ["node.name": name, "media.class": "Audio/Sink", "object.serial": String(id + 1000)])))
        }
        return graph
    }

    @Test("each event's line is the one the document shows, and reads back as the same event")
    func events() throws {
        let route = ControlWire.Event.routeChange(ControlWire.RouteChangeEvent(
            at: 1_763_800_000_123, reason: .placementChanged, previous: "alsa_output.pci.analog-stereo", current: "bluez_output.AA_BB_CC_DD_EE_FF.1",
            accessory: "AA:BB:CC:DD:EE:FF", summary: "2/2 sinks eligible"))
        let accessory = ControlWire.Event.accessory(ControlWire.AccessoryEvent(
            at: 1_763_800_000_100, change: .updated, accessory: "AA:BB:CC:DD:EE:FF", reporter: "org.example.r", configuration: ControlWire.Configuration(Self.worn)))
        let playback = ControlWire.Event.playback(ControlWire.PlaybackEvent(
            at: 1_763_800_000_523, action: .paused, reason: .accessoryRemoved, players: ["org.mpris.MediaPlayer2.mpv.instance4242"],
            sink: "bluez_output.AA_BB_CC_DD_EE_FF.1", accessory: "AA:BB:CC:DD:EE:FF", matches: ["org.mpris.MediaPlayer2.mpv.instance4242": "pid"]))
        let input = ControlWire.Event.routeChange(ControlWire.RouteChangeEvent(
            at: 1_763_800_000_123, reason: .placementChanged, previous: "alsa_input.pci.analog-stereo", current: "bluez_input.AA_BB_CC_DD_EE_FF.0",
            accessory: "AA:BB:CC:DD:EE:FF", summary: "2/2 sources eligible", direction: .input))
        for (event, marker) in [
            (route, #""direction":"output","event":"route-change""#), (input, #""direction":"input","event":"route-change""#),
            (accessory, #""event":"accessory""#), (playback, #""event":"playback""#),
        ] {
            let documented = try ControlProtocolDocTests.jsonExample(containing: marker)
            #expect(Self.line(event) == documented)
            guard case .event(let read, let json) = try ControlWire.message(from: Data(documented.utf8)) else {
                Issue.record("\(marker) not read as an event")
                continue
            }
            #expect(read == event)
            #expect(marker.contains(#""event":"\#(read.name)""#))
            #expect(json == (try JSONValue.parse(documented)))
        }
        let ended = ControlWire.Event.accessory(ControlWire.AccessoryEvent(at: 1, change: .unregistered, accessory: "usb-dac", reporter: nil, configuration: nil))
        #expect(Self.line(ended) == #"{"accessory":"usb-dac","at":1,"change":"unregistered","configuration":null,"event":"accessory","reporter":null}"#)
    }

    @Test("an event this client does not know is kept whole, not refused")
    func unknownEvent() throws {
        let line = #"{"at":5,"event":"battery","level":40}"#
        guard case .event(let event, _) = try ControlWire.message(from: Data(line.utf8)) else { throw Failure("not an event") }
        #expect(event == .other(name: "battery", try JSONValue.parse(line)))
        #expect(Self.line(event) == line)
    }

    @Test("a reply missing a field its type needs is a protocol error naming the field")
    func missingField() throws {
        let line = Data(#"{"id":1,"ok":true,"status":{"mode":"standalone"}}"#.utf8)
        #expect {
            try ControlWire.result(ControlWire.StatusResult.self, from: line)
        } throws: { error in
            "\(error)".contains("status.remote: missing")
        }
        #expect(throws: ControlWireError.self) { try ControlWire.message(from: Data(#"{"id":1}"#.utf8)) }
    }

    @Test("requests: what the client's types send is what the document shows, and what the server reads")
    func requests() throws {
        let register = ControlWire.Request(.register, id: .integer(1), ControlWire.RegisterRequest(
            accessory: "AA:BB:CC:DD:EE:FF", reporter: "org.example.r",
            configuration: ControlWire.Configuration(capabilities: ["audio-switching", "placement"], placement: "off-head")))
        #expect(try JSONValue.parse(Self.line(register)) == JSONValue.parse(Self.documented("→", containing: #""id":1,"#)))
        let update = ControlWire.Request(.update, id: .integer(2), ControlWire.UpdateRequest(accessory: "AA:BB:CC:DD:EE:FF", placement: "on-head"))
        #expect(try JSONValue.parse(Self.line(update)) == JSONValue.parse(Self.documented("→", containing: #""id":2,"#)))
        let clear = ControlWire.Request(.update, id: .integer(3), ControlWire.UpdateRequest(accessory: "AA:BB:CC:DD:EE:FF", primarySource: .clear))
        #expect(try JSONValue.parse(Self.line(clear)) == JSONValue.parse(Self.documented("→", containing: #""id":3,"#)))
        let list = ControlWire.Request(.list, id: .integer(6), ControlWire.NoFields())
        #expect(try JSONValue.parse(Self.line(list)) == JSONValue.parse(Self.documented("→", containing: #""id":6,"#)))
        let current = ControlWire.Request(.current, id: nil, ControlWire.AccessoryField(accessory: "AA:BB:CC:DD:EE:FF"))
        #expect(Self.line(current) == #"{"accessory":"AA:BB:CC:DD:EE:FF","op":"current"}"#)

        guard case .success(let read) = ControlWire.request(from: Data(Self.line(clear).utf8)) else { throw Failure("refused: \(Self.line(clear))") }
        #expect(read == ControlRequest(id: .integer(3), command: .accessory(.update(Self.address, AccessoryUpdate(primarySource: .clear)))))
        guard case .success(let registered) = ControlWire.request(from: Data(Self.line(register).utf8)) else { throw Failure("refused") }
        #expect(registered.command == .accessory(.register(
            Self.address, reporter: "org.example.r", AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .offHead))))
    }

    @Test("reporter names under org.earshot.driver. are refused on the socket and on D-Bus: they are the built-in drivers'")
    func builtInDriverNamesAreReserved() throws {
        let lines = [
            #"{"op":"register","id":1,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.earshot.driver.aap","capabilities":["placement"]}"#,
            #"{"op":"update","id":2,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.earshot.driver.galaxy-buds","placement":"in-ear"}"#,
            #"{"op":"unregister","id":3,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.earshot.driver.aap"}"#,
        ]
        for line in lines {
            guard case .failure(let failure) = ControlWire.request(from: Data(line.utf8)) else {
                Issue.record("accepted: \(line)")
                continue
            }
            #expect(failure.error.code == .invalidRequest)
            #expect(failure.error.message.contains("reserved"))
        }
        let dbus = EarshotBusRequests.register([.string("AA:BB:CC:DD:EE:FF"), .string("org.earshot.driver.aap"), .strings(["placement"]), .properties([:])])
        guard case .failure(let error) = dbus else { throw Failure("D-Bus accepted a built-in driver's name") }
        #expect(error.message.contains("reserved"))
    }

    @Test("reserved in any letter case: ORG.EARSHOT.DRIVER.aap is refused on the socket and on D-Bus as org.earshot.driver.aap is")
    func builtInDriverNamesAreReservedInAnyCase() throws {
        for reporter in ["ORG.EARSHOT.DRIVER.aap", "Org.Earshot.Driver.galaxy-buds", "org.earshot.DRIVER.x"] {
            let lines = [
                #"{"op":"register","id":1,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"\#(reporter)","capabilities":["placement"]}"#,
                #"{"op":"update","id":2,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"\#(reporter)","placement":"in-ear"}"#,
                #"{"op":"unregister","id":3,"accessory":"AA:BB:CC:DD:EE:FF","reporter":"\#(reporter)"}"#,
            ]
            for line in lines {
                guard case .failure(let failure) = ControlWire.request(from: Data(line.utf8)) else {
                    Issue.record("accepted: \(line)")
                    continue
                }
                #expect(failure.error.code == .invalidRequest)
                #expect(failure.error.message.contains("reporter \(reporter) is reserved"), "\(failure.error.message)")
            }
            for request in [
                EarshotBusRequests.register([.string("AA:BB:CC:DD:EE:FF"), .string(reporter), .strings(["placement"]), .properties([:])]),
                EarshotBusRequests.update([.string("AA:BB:CC:DD:EE:FF"), .string(reporter), .properties(["placement": .string("in-ear")])]),
            ] {
                guard case .failure(let error) = request else { throw Failure("D-Bus accepted \(reporter)") }
                #expect(error.message.contains("reserved"))
            }
        }
        #expect(ReporterName.isBuiltInDriver("org.earshot.driver.aap"))
        #expect(!ReporterName.isBuiltInDriver("org.earshot.driver"), "the prefix ends with its dot")
        #expect(!ReporterName.isBuiltInDriver("org.earshot.drivers.x"))
        #expect(!ReporterName.isBuiltInDriver("org.example.driver.aap"))
        #expect(!ReporterName.isBuiltInDriver("org.earshot.cli"))
    }

    @Test("the direct JSONValue encoding (D-Bus) is the JSON a client reads from the line")
    func directEncoding() throws {
        func same(_ value: some Encodable, _ sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
            #expect(try JSONValueEncoder.encode(value) == JSONValue.parse(ControlWire.text(value)), sourceLocation: sourceLocation)
        }
        var engine = PolicyEngine(graph: Self.graph(), config: PolicyConfig())
        let decision = engine.handle(.start, at: 5120).decision
        let host = HostAddress(BluetoothAddress("11:22:33:44:55:66")!, from: [.config, .bluez(adapter: "hci0")])
        try same(ControlWire.Status(mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "wireplumber", decision: .record(DecisionRecord(decision)), hostAddresses: [ControlWire.HostAddressEntry(host)]))
        try same(DecisionRecord(decision, line: 3))
        let registration = AccessoryRegistration(identity: Self.address, reporter: "org.example.r", configuration: Self.worn, registeredAt: 0)
        try same(ControlWire.success(id: .string("x"), ControlWire.ListResult([ControlWire.ListedAccessory(registration, stale: true, sinks: [])])))
        try same(ControlWire.failure(id: nil, AccessoryError(.invalidated, "gone")))
        try same(ControlWire.Event.accessory(ControlWire.AccessoryEvent(at: 1, change: .invalidated, accessory: "x", reporter: nil, configuration: nil)))
        try same(ControlWire.Request(.status, id: nil, ControlWire.NoFields()))
        try same(ControlWire.UpdateRequest(accessory: "AA:BB:CC:DD:EE:FF", primarySource: .clear, secondarySource: .set("11:22:33:44:55:66")))
        try same(JSONValue.parse(#"{"a":[1,2.5,null,true,{"b":"c"}]}"#))
    }

    @Test("absent fields: each field's declaration writes null in both encoders; a line without the key reads as absent; an unknown enum value is kept")
    func absentFields() throws {
        var change = ControlWire.RouteChangeEvent(
            at: 1, reason: .initial, previous: nil, current: nil, accessory: nil, summary: "s", previousPort: nil, port: nil, portEvent: nil, direction: .output)
        change.reason = OpenEnum(rawValue: "r")
        let text = ControlWire.text(change)
        #expect(text == #"{"accessory":null,"at":1,"current":null,"direction":"output","port":null,"port-event":null,"previous":null,"previous-port":null,"reason":"r","summary":"s"}"#)
        #expect(try ControlWire.jsonValue(of: change) == JSONValue.parse(text))
        var playback = ControlWire.PlaybackEvent(at: 2, action: .paused, reason: .sinkRemoved, players: [], sink: nil, accessory: nil)
        playback.reason = OpenEnum(rawValue: "r")
        #expect(ControlWire.text(playback) == #"{"accessory":null,"action":"paused","at":2,"matches":{},"players":[],"reason":"r","sink":null,"streams":[]}"#)
        let event = ControlWire.AccessoryEvent(at: 3, change: .unregistered, accessory: "AA:BB:CC:DD:EE:FF", reporter: nil, configuration: nil)
        #expect(ControlWire.text(event) == #"{"accessory":"AA:BB:CC:DD:EE:FF","at":3,"change":"unregistered","configuration":null,"reporter":null}"#)
        #expect(ControlWire.text(ControlWire.ListResult([])) == #"{"accessories":[],"next":null}"#)

        // Keys left out by an older or terser peer decode as absent, not as an error.
        let decoder = JSONDecoder()
        let terse = try decoder.decode(ControlWire.RouteChangeEvent.self, from: Data(#"{"at":1,"reason":"r","summary":"s"}"#.utf8))
        #expect(terse.previous == nil && terse.portEvent == nil && terse.direction == .output && terse.reason.rawValue == "r" && terse.reason.known == nil)
        let configuration = try decoder.decode(ControlWire.Configuration.self, from: Data(#"{"capabilities":[]}"#.utf8))
        #expect(configuration == ControlWire.Configuration(capabilities: []))
        let old = try decoder.decode(
            ControlWire.Status.self,
            from: Data(#"{"mode":"cooperative","remote":"pipewire-0","connected":true,"subscribers":0,"host-addresses":[]}"#.utf8))
        #expect(old.drivers.isEmpty && old.decision == nil && old.sessionManager == nil)
        #expect(ControlWire.text(old).contains(#""drivers":[]"#) && ControlWire.text(old).contains(#""session-manager":null"#))
        // A field that is null on the wire is absent too.
        let nulls = try decoder.decode(ControlWire.Configuration.self, from: Data(#"{"capabilities":[],"placement":null}"#.utf8))
        #expect(nulls.placement == nil)
    }
}
