@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotCommands
import EarshotDaemon
import RoutingPolicy
import TestScheduling
import Testing

/// `earshot watch`'s one line per event, read from the event's JSON fields.
@Suite("earshot watch lines", .blockingCalls)
struct WatchLineTests {
    static let at = JSONValue.integer(1_763_800_000_200)  // 2025-11-22T08:26:40.200Z

    static func host(_ address: String, _ origins: String...) -> JSONValue {
        .object(["address": .string(address), "from": .array(origins.map(JSONValue.string))])
    }

    @Test("host-addresses: every address with its origins, then what was added and removed")
    func hostAddresses() {
        let plugged = ControlText.event(name: "host-addresses", [
            "event": .string("host-addresses"), "at": Self.at,
            "addresses": .array([Self.host("66:55:44:33:22:11", "config"), Self.host("11:22:33:44:55:66", "bluez hci0")]),
            "added": .array([.string("11:22:33:44:55:66")]), "removed": .array([]),
        ])
        #expect(plugged == "2025-11-22T08:26:40.200Z  host addresses 66:55:44:33:22:11 (config), 11:22:33:44:55:66 (bluez hci0)  added 11:22:33:44:55:66")

        let gone = ControlText.event(name: "host-addresses", [
            "event": .string("host-addresses"), "at": Self.at, "addresses": .array([]),
            "added": .array([]), "removed": .array([.string("11:22:33:44:55:66"), .string("22:33:44:55:66:77")]),
        ])
        #expect(gone == "2025-11-22T08:26:40.200Z  host addresses none known  removed 11:22:33:44:55:66, 22:33:44:55:66:77")

        let origins = ControlText.event(name: "host-addresses", [
            "event": .string("host-addresses"), "at": Self.at, "addresses": .array([Self.host("11:22:33:44:55:66", "config", "bluez hci0")]),
            "added": .array([]), "removed": .array([]),
        ])
        #expect(origins == "2025-11-22T08:26:40.200Z  host addresses 11:22:33:44:55:66 (config, bluez hci0)")
    }
}

/// The other events' lines, from the protocol's types.
@Suite("earshot watch lines, typed", .blockingCalls)
struct WatchTypedLineTests {
    @Test("route-change, accessory and playback lines; an unknown event is printed whole")
    func lines() throws {
        let route = ControlWire.Event.routeChange(ControlWire.RouteChangeEvent(
            at: 1_763_800_000_200, reason: .placementChanged, previous: nil, current: "bluez_output.AA_BB_CC_DD_EE_FF.1", accessory: "AA:BB:CC:DD:EE:FF",
            summary: "2/2 sinks eligible"))
        #expect(ControlText.event(route) == "2025-11-22T08:26:40.200Z  placement-changed  (none) -> bluez_output.AA_BB_CC_DD_EE_FF.1  accessory AA:BB:CC:DD:EE:FF")
        let updated = ControlWire.Event.accessory(ControlWire.AccessoryEvent(
            at: 1_763_800_000_200, change: .updated, accessory: "AA:BB:CC:DD:EE:FF", reporter: "org.example.r",
            configuration: ControlWire.Configuration(AccessoryConfiguration(capabilities: [.placement], placement: .inEar))))
        #expect(ControlText.event(updated) == "2025-11-22T08:26:40.200Z  accessory updated AA:BB:CC:DD:EE:FF  placement in-ear")
        let resumed = ControlWire.Event.playback(ControlWire.PlaybackEvent(
            at: 1_763_800_000_200, action: .resumed, reason: .accessoryReturned, players: ["a", "b"], sink: nil, accessory: nil))
        #expect(ControlText.event(resumed) == "2025-11-22T08:26:40.200Z  resumed a, b  (accessory-returned)")
        let unknown = ControlWire.Event.other(name: "battery", try JSONValue.parse(#"{"at":1763800000200,"event":"battery","level":40}"#))
        #expect(ControlText.event(unknown) == #"2025-11-22T08:26:40.200Z  battery  {"at":1763800000200,"event":"battery","level":40}"#)
    }

    @Test("stream-moved: the stream, where it goes and why; call-source: where calls record from")
    func calls() {
        let loopback = "bluez_input.AC:80:0A:CA:97:12"
        func moved(_ kind: StreamMove.Kind, application: String? = "Some Softphone", role: String? = "Communication", from: String?, to: String?) -> String {
            ControlText.event(.streamMoved(ControlWire.StreamMovedEvent(
                at: 1_763_800_000_200, move: StreamMove(kind: kind, stream: 401, serial: 1401, application: application, role: role, from: from, to: to))))
        }
        #expect(moved(.call, from: nil, to: loopback) == "2025-11-22T08:26:40.200Z  stream #401 Some Softphone (Communication) -> \(loopback) (call)")
        #expect(moved(.back, from: loopback, to: nil) == "2025-11-22T08:26:40.200Z  stream #401 Some Softphone (Communication) -> default source (back)")
        #expect(moved(.staleTarget, application: "Chromium input", role: nil, from: loopback, to: nil)
            == "2025-11-22T08:26:40.200Z  stream #401 Chromium input -> default source (stale-target)")
        #expect(moved(.call, application: nil, role: nil, from: nil, to: "evil\u{1B}[2J") == #"2025-11-22T08:26:40.200Z  stream #401 -> evil\u{1B}[2J (call)"#)
        let on = ControlText.event(.callSource(ControlWire.CallSourceEvent(at: 1_763_800_000_200, previous: nil, current: loopback)))
        #expect(on == "2025-11-22T08:26:40.200Z  calls default source -> \(loopback) (keeps A2DP: calls only)")
        let off = ControlText.event(.callSource(ControlWire.CallSourceEvent(at: 1_763_800_000_200, previous: loopback, current: nil)))
        #expect(off == "2025-11-22T08:26:40.200Z  calls \(loopback) -> default source")
    }

    @Test("names with ESC, BEL, line breaks or bidi overrides (any client's) are escaped: one line per event, the same line otherwise")
    func hostileNames() {
        let route = ControlWire.Event.routeChange(ControlWire.RouteChangeEvent(
            at: 1_763_800_000_200, reason: .oldDeviceUnavailable, previous: "evil\u{1B}]0;pwned\u{07}", current: "speakers\n2025  forged -> line",
            accessory: nil, summary: "1/1 sinks eligible", previousPort: "Line", port: "Head\u{202E}phones",
            portEvent: PortEvent(kind: .unplugged, sink: "x", port: "Jack\u{9B}2J")))
        #expect(ControlText.event(route) == #"2025-11-22T08:26:40.200Z  old-device-unavailable  evil\u{1B}]0;pwned\u{07} -> speakers\u{0A}2025  forged -> line  port "Jack\u{9B}2J" unplugged"#)
        let accessory = ControlWire.Event.accessory(ControlWire.AccessoryEvent(
            at: 1_763_800_000_200, change: .registered, accessory: "Evil\r\u{2066}Sink", reporter: "org.example.r",
            configuration: ControlWire.Configuration(AccessoryConfiguration(capabilities: [.placement], placement: .inEar))))
        #expect(ControlText.event(accessory) == #"2025-11-22T08:26:40.200Z  accessory registered Evil\u{0D}\u{2066}Sink  placement in-ear"#)
        let paused = ControlWire.Event.playback(ControlWire.PlaybackEvent(
            at: 1_763_800_000_200, action: .paused, reason: .sinkRemoved, players: ["org.mpris.MediaPlayer2.a"], sink: "s\u{7F}\u{1B}[8m", accessory: nil))
        #expect(ControlText.event(paused) == #"2025-11-22T08:26:40.200Z  paused org.mpris.MediaPlayer2.a  (sink-removed)  sink s\u{7F}\u{1B}[8m"#)
    }
}
