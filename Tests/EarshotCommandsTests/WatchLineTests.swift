import AudioGraph
@testable import EarshotCommands
import Testing

/// `earshot watch`'s one line per event, read from the event's JSON fields.
@Suite("earshot watch lines")
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
