import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// `earshot daemon` learning this host's Bluetooth adapters from org.bluez on a private system
/// bus, where a stand-in BlueZ (dbus-python) plugs and unplugs adapters; the source-identifier
/// rule (§1) follows them, and falls back to the config's host-addresses when BlueZ goes.
@Suite("BlueZ host addresses", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
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
            let events = try EventSubscription(socket: daemon.socketPath)
            // BlueZ is not running yet: the config's address only, and the accessory plays elsewhere.
            try Self.register(daemon, primarySource: Self.adapterA)
            let before = try await Self.statusOnceRouted(to: D.speakers, daemon, events)
            #expect(Self.hostAddresses(in: before) == ["\(Self.configured) (config)"])

            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": Self.adapterA])
            defer { bluez.stop() }
            let plugged = try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci0)"])
            #expect(plugged["added"] == .array([.string(Self.adapterA)]))
            #expect(plugged["removed"] == .array([]))
            let toHeadphones = try await Self.nextRoute(events, daemon, to: D.headphones)
            #expect(toHeadphones["reason"] == .string("source-changed"))
            let worn = try Self.status(daemon)
            #expect(Self.hostAddresses(in: worn) == ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci0)"])
            #expect(worn["decision"]?["reason"] == .string("source-changed"))
            #expect(worn["decision"]?["trigger"] == .string("host addresses"))
            // `earshot watch` prints the event as one line.
            #expect(ControlText.event(name: "host-addresses", plugged.objectFields)
                .hasSuffix("  host addresses \(Self.configured) (config), \(Self.adapterA) (bluez hci0)  added \(Self.adapterA)"))

            try bluez.send("remove hci0")
            let unplugged = try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)"])
            #expect(unplugged["removed"] == .array([.string(Self.adapterA)]))
            try await Self.nextRoute(events, daemon, to: D.speakers)
            let elsewhere = try Self.status(daemon)
            #expect(Self.rejection(of: D.headphones, in: elsewhere)?.contains("is playing for another host (primary \(Self.adapterA); this host is \(Self.configured) (config))") == true)

            // Another adapter: the host addresses change, the output does not (checked by the
            // next step's route change being the first since).
            try bluez.send("add hci1 \(Self.adapterB)")
            try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)", "\(Self.adapterB) (bluez hci1)"])
            let other = try Self.status(daemon)
            #expect(other["decision"]?["default"] == .string(D.speakers))
            #expect(Self.rejection(of: D.headphones, in: other)?.contains("\(Self.adapterB) (bluez hci1)") == true)

            try bluez.send("add hci0 \(Self.adapterA)")
            try await Self.nextHostAddresses(
                events, daemon, ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci0)", "\(Self.adapterB) (bluez hci1)"])
            try await Self.nextRoute(events, daemon, to: D.headphones)

            // An adapter's Address changing (PropertiesChanged) counts as well.
            try bluez.send("remove hci0")
            try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)", "\(Self.adapterB) (bluez hci1)"])
            try await Self.nextRoute(events, daemon, to: D.speakers)
            try bluez.send("address hci1 \(Self.adapterA)")
            let readdressed = try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci1)"])
            #expect(readdressed["added"] == .array([.string(Self.adapterA)]))
            #expect(readdressed["removed"] == .array([.string(Self.adapterB)]))
            try await Self.nextRoute(events, daemon, to: D.headphones)
            #expect(Self.hostAddresses(in: try Self.status(daemon)) == ["\(Self.configured) (config)", "\(Self.adapterA) (bluez hci1)"])

            // BlueZ vanishes: back to the config's host-addresses, which still decide.
            bluez.stop()
            try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)"])
            try await Self.nextRoute(events, daemon, to: D.speakers)
            let moved = try daemon.earshot("accessory", "update", D.address, "--primary-source", Self.configured, "--reporter", "org.earshot.test")
            #expect(moved.status == 0, "\(moved.output)")
            // The next event is that update's, not another host-addresses one.
            #expect(try await events.nextAny()["event"] == .string("accessory"))
            try await Self.nextRoute(events, daemon, to: D.headphones)
            #expect(Self.hostAddresses(in: try Self.status(daemon)) == ["\(Self.configured) (config)"])

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
            let events = try EventSubscription(socket: daemon.socketPath)
            // BlueZ may have answered before the subscription: then the status already says so.
            if Self.hostAddresses(in: try Self.status(daemon)) != ["\(Self.adapterA) (bluez hci0)"] {
                try await Self.nextHostAddresses(events, daemon, ["\(Self.adapterA) (bluez hci0)"])
            }
            let learnt = try Self.status(daemon)
            #expect(learnt["decision"] == .null, "BlueZ's adapter known before any decision")
            #expect(learnt["connected"] == .bool(false))
            #expect(Self.hostAddresses(in: learnt) == ["\(Self.adapterA) (bluez hci0)"])

            try await sandbox.restartPipeWire()
            for sink in sinks { try await sandbox.addSink(sink) }
            // The daemon connected and applied its decision over its first graph (the engine
            // rebuilt): with nothing registered yet, the headphones (no session manager here, so
            // only the daemon writes the default). Registering only then makes the rebuilt engine
            // decide whether the adapter is this host's.
            _ = try await sandbox.observer.waitUntil("the daemon's first default", timeout: .seconds(10)) {
                $0.configuredDefaultSinkName == D.headphones
            }
            try Self.register(daemon, primarySource: Self.adapterA)
            let routed = try Self.status(daemon)
            #expect(routed["decision"]?["default"] == .string(D.headphones), "the adapter was forgotten: \(routed.canonicalText)")
            #expect(Self.hostAddresses(in: routed) == ["\(Self.adapterA) (bluez hci0)"])

            try sandbox.killPipeWire()
            try await sandbox.restartPipeWire()
            for sink in sinks { try await sandbox.addSink(sink) }
            // The restarted PipeWire's default is the headphones once the daemon has reconnected and applied its decision.
            _ = try await sandbox.observer.waitUntil("the headphones as default after the restart", timeout: .seconds(10)) {
                $0.configuredDefaultSinkName == D.headphones
            }
            let restarted = try Self.status(daemon)
            #expect(restarted["connected"] == .bool(true))
            #expect(restarted["decision"]?["default"] == .string(D.headphones))
            #expect(Self.hostAddresses(in: restarted) == ["\(Self.adapterA) (bluez hci0)"])
        }
    }

    @Test("without a system bus the daemon routes with the config's host-addresses and says so once; a config reload changes them")
    func noSystemBus() async throws {
        try await withSandbox(.init(sinks: [.speakers(), .headphones()])) { sandbox in
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.configured)\"]\n")
            let daemon = try D.start(in: sandbox)
            let events = try EventSubscription(socket: daemon.socketPath)
            try Self.register(daemon, primarySource: Self.configured)
            let routed = try await Self.statusOnceRouted(to: D.headphones, daemon, events)
            #expect(Self.hostAddresses(in: routed) == ["\(Self.configured) (config)"])
            let log = daemon.process.logTail(lines: 400)
            #expect(log.components(separatedBy: "no D-Bus system bus").count == 2, "said once:\n\(log)")
            #expect(!log.contains("error"), "\(log)")

            // The config's list is reread on a reload (the daemon watches the file): another
            // address joins, then the accessory's own source leaves and the output with it.
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.configured)\", \"\(Self.adapterA)\"]\n")
            let joined = try await Self.nextHostAddresses(events, daemon, ["\(Self.configured) (config)", "\(Self.adapterA) (config)"])
            #expect(joined["added"] == .array([.string(Self.adapterA)]))
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.adapterA)\"]\n")
            let left = try await Self.nextHostAddresses(events, daemon, ["\(Self.adapterA) (config)"])
            #expect(left["removed"] == .array([.string(Self.configured)]))
            let away = try await Self.nextRoute(events, daemon, to: D.speakers)
            #expect(away["reason"] == .string("config-changed"))

            // A reload that leaves the addresses as they were sends no host-addresses event:
            // the next event is the accessory update after it.
            try Self.writeConfig(sandbox, "host-addresses = [\"\(Self.adapterA)\"]\n[timing]\noff-grace-ms = 700\n")
            try await daemon.process.waitForLog(containing: "config reloaded from", occurrences: 3)
            let update = try daemon.earshot("accessory", "update", D.address, "--primary-source", Self.adapterA, "--reporter", "org.earshot.test")
            #expect(update.status == 0, "\(update.output)")
            #expect(try await events.nextAny()["event"] == .string("accessory"))
            try await Self.nextRoute(events, daemon, to: D.headphones)
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

    /// `earshot status --json`, read once.
    static func status(_ daemon: D) throws -> JSONValue {
        let result = try daemon.earshot("status", "--json")
        // 3: the daemon answers but PipeWire is down (the status is printed all the same).
        guard result.status == 0 || result.status == 3, let status = try? JSONValue.parse(result.output) else {
            throw FixtureError("status failed (\(result.status)): \(result.output)\n\(daemon.process.logTail())")
        }
        return status
    }

    /// The status once the daemon's decision has `sink` as the default: at once when it already
    /// has (decided before the subscription), otherwise after the route change to it.
    static func statusOnceRouted(to sink: String, _ daemon: D, _ events: EventSubscription) async throws -> JSONValue {
        let status = try status(daemon)
        if status["decision"]?["default"] == .string(sink) { return status }
        _ = try await events.next("route-change") { $0["current"] == .string(sink) }
        return try Self.status(daemon)
    }

    /// The next host-addresses event, which must list `hosts` (`address (origin, …)`).
    @discardableResult
    static func nextHostAddresses(_ events: EventSubscription, _ daemon: D, _ hosts: [String]) async throws -> JSONValue {
        let event = try await events.next("host-addresses")
        guard hostAddresses(in: event, key: "addresses") == hosts else {
            throw FixtureError("host-addresses event \(event.canonicalText), expected \(hosts)\n\(daemon.process.logTail())")
        }
        return event
    }

    /// The next route change, which must be to `sink`.
    @discardableResult
    static func nextRoute(_ events: EventSubscription, _ daemon: D, to sink: String) async throws -> JSONValue {
        let event = try await events.next("route-change")
        guard event["current"] == .string(sink) else {
            throw FixtureError("route change \(event.canonicalText), expected one to \(sink)\n\(daemon.process.logTail())")
        }
        return event
    }

    /// The host addresses of a status (`host-addresses`) or a host-addresses event
    /// (`addresses`) as `address (origin, …)`.
    static func hostAddresses(in object: JSONValue, key: String = "host-addresses") -> [String]? {
        guard case .array(let entries)? = object[key] else { return nil }
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
