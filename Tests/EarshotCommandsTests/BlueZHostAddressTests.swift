import AudioGraph
import Foundation
import PipeWireTestSupport
import Testing

/// `earshot daemon` learning this host's Bluetooth adapters from org.bluez on a private system
/// bus, where a stand-in BlueZ (dbus-python) plugs and unplugs adapters; the source-identifier
/// rule (§1) follows them, and falls back to the config's host-addresses when BlueZ goes.
@Suite("BlueZ host addresses", .serialized, .timeLimit(.minutes(3)))
struct BlueZHostAddressTests {
    typealias D = DaemonFixture
    static let adapterA = "11:22:33:44:55:66"
    static let adapterB = "22:33:44:55:66:77"
    static let configured = "66:55:44:33:22:11"

    @Test("the accessory plays for this host while BlueZ lists its primary source: adapters unplugged, plugged, readdressed; BlueZ gone → config only")
    func adaptersFollowed() async throws {
        try await withSandbox(.init(sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.configured)\"]\n")
            let daemon = try D.start(in: sandbox)
            // BlueZ is not running yet: the config's address only, and the accessory plays elsewhere.
            try Self.register(daemon, primarySource: Self.adapterA)
            try await Self.waitForStatus(daemon, default: D.speakers, hosts: ["\(Self.configured) (config)"])

            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapterA])
            defer { bluez.stop() }
            let worn = try await Self.waitForStatus(
                daemon, default: D.headphones, hosts: ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci0)"])
            #expect(worn["decision"]?["reason"] == .string("source-changed"))
            #expect(worn["decision"]?["trigger"] == .string("host addresses"))

            try bluez.send("remove hci0")
            let elsewhere = try await Self.waitForStatus(daemon, default: D.speakers, hosts: ["\(Self.configured) (config)"])
            #expect(Self.rejection(of: D.headphones, in: elsewhere)?.contains("is playing for another host (primary \(Self.adapterA); this host is \(Self.configured) (config))") == true)

            try bluez.send("add hci1 \(Self.adapterB)")
            let other = try await Self.waitForStatus(
                daemon, default: D.speakers, hosts: ["\(Self.configured) (config)", "\(Self.adapterB) (bluez hci1)"])
            #expect(Self.rejection(of: D.headphones, in: other)?.contains("\(Self.adapterB) (bluez hci1)") == true)

            try bluez.send("add hci0 \(Self.adapterA)")
            try await Self.waitForStatus(
                daemon, default: D.headphones,
                hosts: ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci0)", "\(Self.adapterB) (bluez hci1)"])

            // An adapter's Address changing (PropertiesChanged) counts as well.
            try bluez.send("remove hci0")
            try await Self.waitForStatus(daemon, default: D.speakers, hosts: ["\(Self.configured) (config)", "\(Self.adapterB) (bluez hci1)"])
            try bluez.send("address hci1 \(Self.adapterA)")
            try await Self.waitForStatus(daemon, default: D.headphones, hosts: ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci1)"])

            // BlueZ vanishes: back to the config's host-addresses, which still decide.
            bluez.stop()
            try await Self.waitForStatus(daemon, default: D.speakers, hosts: ["\(Self.configured) (config)"])
            let moved = try daemon.earshot("accessory", "update", D.address, "--primary-source", Self.configured)
            #expect(moved.status == 0, "\(moved.output)")
            try await Self.waitForStatus(daemon, default: D.headphones, hosts: ["\(Self.configured) (config)"])

            let text = try daemon.earshot("status")
            #expect(text.output.contains("host addresses: \(Self.configured) (config)\n"), "\(text.output)")
            let log = daemon.process.logTail(lines: 400)
            #expect(log.components(separatedBy: "BlueZ (org.bluez) is not on the system bus").count == 2, "said once:\n\(log)")
            #expect(log.contains("BlueZ left the system bus"))
        }
    }

    // Adapters read while PipeWire is still down reach the engine that is rebuilt over the first
    // graph, and a PipeWire restart (graph replaced) keeps them too.
    @Test("adapters learnt before PipeWire is up survive the engine's rebuild and a PipeWire restart")
    func adaptersSurviveEngineRebuild() async throws {
        let sinks: [VirtualSink] = [.speakers(), .headphones()]
        try await withSandbox(.init(sinks: sinks, systemBus: true)) { sandbox in
            try sandbox.killPipeWire()
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapterA])
            defer { bluez.stop() }
            let daemon = try D.start(in: sandbox)
            try await Self.waitForStatus(daemon, "BlueZ's adapter known before any decision") { status in
                status["decision"] == .null && Self.hostAddresses(in: status) == ["\(Self.adapterA) (bluez hci0)"]
            }
            try await sandbox.restartPipeWire()
            for sink in sinks { try await sandbox.addSink(sink) }
            try Self.register(daemon, primarySource: Self.adapterA)
            try await Self.waitForStatus(daemon, default: D.headphones, hosts: ["\(Self.adapterA) (bluez hci0)"])

            try sandbox.killPipeWire()
            try await sandbox.restartPipeWire()
            for sink in sinks { try await sandbox.addSink(sink) }
            // The restarted PipeWire's default is the headphones once the daemon has reconnected and applied its decision.
            _ = try await sandbox.observer.waitUntil("the headphones as default after the restart", timeout: .seconds(10)) {
                $0.configuredDefaultSinkName == D.headphones
            }
            try await Self.waitForStatus(daemon, "connected, headphones, the adapter still known") { status in
                status["connected"] == .bool(true) && status["decision"]?["default"] == .string(D.headphones)
                    && Self.hostAddresses(in: status) == ["\(Self.adapterA) (bluez hci0)"]
            }
        }
    }

    @Test("without a system bus the daemon routes with the config's host-addresses and says so once")
    func noSystemBus() async throws {
        try await withSandbox(.init(sinks: [.speakers(), .headphones()])) { sandbox in
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.configured)\"]\n")
            let daemon = try D.start(in: sandbox)
            try Self.register(daemon, primarySource: Self.configured)
            try await Self.waitForStatus(daemon, default: D.headphones, hosts: ["\(Self.configured) (config)"])
            let log = daemon.process.logTail(lines: 400)
            #expect(log.components(separatedBy: "no D-Bus system bus").count == 2, "said once:\n\(log)")
            #expect(!log.contains("error"), "\(log)")
        }
    }

    // MARK: Helpers

    static func writeConfig(_ sandbox: PipeWireSandbox, _ text: String) throws {
        let directory = sandbox.configDir.appendingPathComponent("earshot")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try text.write(to: directory.appendingPathComponent("earshot.toml"), atomically: true, encoding: .utf8)
    }

    /// Worn headphones with audio-switching, playing for `primarySource`.
    static func register(_ daemon: D, primarySource: String) throws {
        let result = try daemon.earshot(
            "accessory", "register", D.address, "--capabilities", "audio-switching,placement", "--placement", "on-head",
            "--primary-source", primarySource, "--reporter", "org.earshot.test")
        guard result.status == 0 else { throw FixtureError("register failed (\(result.status)): \(result.output)\n\(daemon.process.logTail())") }
    }

    /// The status once the decision's default is `sink` and the host addresses in use read
    /// `hosts` (`address (origin, …)`), polled through the real CLI up to the deadline.
    @discardableResult
    static func waitForStatus(_ daemon: D, default sink: String, hosts: [String], timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await waitForStatus(daemon, "default \(sink) and host addresses \(hosts)", timeout: timeout) { status in
            status["decision"]?["default"] == .string(sink) && hostAddresses(in: status) == hosts
        }
    }

    @discardableResult
    static func waitForStatus(_ daemon: D, _ what: String, timeout: Duration = .seconds(10), _ predicate: (JSONValue) -> Bool) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            let result = try daemon.earshot("status", "--json")
            last = result.output
            if result.status == 0, let status = try? JSONValue.parse(result.output), predicate(status) { return status }
            await Task.yield()
        }
        throw FixtureError("status never had \(what); last: \(last)\n\(daemon.process.logTail())")
    }

    static func hostAddresses(in status: JSONValue) -> [String]? {
        guard case .array(let entries)? = status["host-addresses"] else { return nil }
        return entries.map { entry in
            guard case .string(let address)? = entry["address"], case .array(let origins)? = entry["from"] else { return "?" }
            let names = origins.compactMap { origin -> String? in
                if case .string(let name) = origin { return name }
                return nil
            }
            return "\(address) (\(names.joined(separator: ", ")))"
        }
    }

    static func rejection(of node: String, in status: JSONValue) -> String? {
        guard case .array(let rejected)? = status["decision"]?["rejected"] else { return nil }
        for entry in rejected where entry["node"] == .string(node) {
            if case .string(let why)? = entry["why"] { return why }
        }
        return nil
    }
}
