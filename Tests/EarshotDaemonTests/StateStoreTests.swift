import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

@Suite("State store", .blockingCalls)
struct StateStoreTests {
    static func temporaryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-state-\(UUID().uuidString)")
        return directory.appendingPathComponent("earshot/state.json").path
    }

    @Test("registrations and history round-trip through the file; no temp file is left")
    func roundTrip() throws {
        let path = try Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: ((path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent) }
        let store = StateStore(path: path)
        #expect(try store.load() == PersistedState())
        let registration = AccessoryRegistration(
            identity: .address(BluetoothAddress("aa:bb:cc:dd:ee:ff")!), reporter: "org.example.r",
            configuration: AccessoryConfiguration(capabilities: [.audioSwitching, .placement], placement: .onHead, primarySource: BluetoothAddress("11:22:33:44:55:66")),
            registeredAt: 0)
        let named = AccessoryRegistration(identity: .nodeName("usb-dac"), reporter: "org.example.dac", configuration: AccessoryConfiguration(capabilities: []), registeredAt: 0)
        let state = PersistedState(
            registrations: [registration, named],
            history: [.init(at: 1, current: "a", previous: nil, reason: "initial")])
        try store.save(state)
        #expect(try store.load() == state)
        let directory = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a corrupt or truncated file is an error the daemon reports (then starts clean)")
    func corrupt() throws {
        let path = try Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: ((path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for text in ["{\"version\": 1, \"registrations\": [", "garbage", "{\"version\":1,\"registrations\":[{\"accessory\":\"zz\"}],\"history\":[]}"] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: (any Error).self) { try StateStore(path: path).load() }
        }
    }
}

/// Issue 12 item 4: a save reuses the bytes of unchanged registrations, and writes exactly what
/// encoding the whole state writes.
struct StateFileFragmentTests {
    static func registration(_ index: Int, placement: Placement? = nil, capabilities: AccessoryCapabilities = [.audioSwitching, .placement]) -> AccessoryRegistration {
        AccessoryRegistration(
            identity: index % 2 == 0 ? .nodeName("node-\(index) \"quoted\" / slash") : .address(BluetoothAddress(bytes: [1, 2, 3, 4, 5, UInt8(index)])),
            reporter: "org.example.r", configuration: AccessoryConfiguration(capabilities: capabilities, placement: placement), registeredAt: 0)
    }

    @Test("byte for byte what encode writes: none, one, many, empty lists, history; after changes the cache is reused and still exact")
    func sameBytes() throws {
        var cache = StateFile.FragmentCache()
        let history = [PersistedState.HistoryEntry(at: 1, current: "a \"registrations\" : [", previous: nil, reason: "initial")]
        var states = [PersistedState(), PersistedState(registrations: [], history: history)]
        states.append(PersistedState(registrations: [Self.registration(1, capabilities: [])], history: []))
        let many = (0..<50).map { Self.registration($0, placement: $0 % 3 == 0 ? .onHead : nil) }
        states.append(PersistedState(registrations: many, history: history))
        var changed = many
        changed[7] = Self.registration(7, placement: .inEar)
        changed.remove(at: 20)
        states.append(PersistedState(registrations: changed, history: history))
        states.append(PersistedState(registrations: changed, history: history + history))
        for state in states {
            let reused = try StateFile.encode(state, reusing: &cache)
            #expect(reused == (try StateFile.encode(state)), "\(String(decoding: reused, as: UTF8.self))")
            #expect(try StateFile.decode(reused, path: "test") == state)
        }
        #expect(cache.count == changed.count)
    }
}
