import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 31: the drivers' batteries reach the desktop through BlueZ's battery provider API.
/// Real daemon, the stand-in BlueZ (BatteryProviderManager1 and Battery1 with BlueZ's
/// semantics) on a private system bus, its AirPods and Galaxy Buds peers. What the desktop
/// would see is what the stand-in prints ("battery DEVICE percentage N").
@Suite("Batteries on the desktop end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct DesktopBatteryEndToEndTests {
    typealias D = DaemonFixture
    static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    static let provided = "desktop battery of \(D.address): provided"

    /// A stand-in and a daemon in a fresh sandbox; the AirPods (or Galaxy Buds) added.
    static func withWorld(
        standIn options: [String] = [], config: String? = nil, galaxyBuds: Bool = false,
        _ body: (PipeWireSandbox, BlueZStandIn, D, String) async throws -> Void
    ) async throws {
        try await withSandbox(.init(systemBus: true)) { sandbox in
            if let config { try DaemonReliabilityTests.writeConfig(sandbox, config) }
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback, options: options)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback])
            defer { daemon.process.stop() }
            if galaxyBuds { try await bluez.addGalaxyBuds(D.address) } else { try await bluez.addAirPods(D.address) }
            try await body(sandbox, bluez, daemon, loopback)
        }
    }

    /// Connects the AirPods and waits until the driver has asked for notifications.
    static func connectAirPods(_ bluez: BlueZStandIn) async throws {
        let mark = bluez.logMark()
        try await bluez.connect(D.address)
        _ = try await bluez.waitForLine(containing: "aap \(D.address) received 040004000f00", since: mark, timeout: .seconds(20))
    }

    /// Waits for the daemon to settle on `state` for the headset, then checks `status --json`.
    static func expectDesktopBattery(_ state: String, _ daemon: D, timeout: Duration = .seconds(15)) async throws {
        try await daemon.process.waitForLog(containing: "desktop battery of \(D.address): \(state)", timeout: timeout)
        #expect(try desktopBattery(daemon) == .string(state))
    }

    /// `earshot accessory show` once the driver registered the AirPods (with their first ear report).
    static func shownAirPods(_ daemon: D, _ bluez: BlueZStandIn) async throws -> String {
        let events = try EventSubscription(socket: daemon.socketPath)
        try await bluez.aapEar(D.address, primary: .inEar, secondary: .inEar)
        _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
        return try daemon.earshot("accessory", "show", D.address).output
    }

    /// Connects the AirPods and sends a battery report (buds 50 and 40 unless said); the log
    /// mark before it.
    static func connectWithBattery(_ bluez: BlueZStandIn, left: Int = 50, right: Int = 40) async throws -> Int {
        try await connectAirPods(bluez)
        let mark = bluez.logMark()
        try await bluez.aapBattery(D.address, left: left, right: right, chargingCase: 5)
        return mark
    }

    /// The driver entry's `desktop-battery` in `status --json`.
    static func desktopBattery(_ daemon: D) throws -> JSONValue? {
        let status = try BlueZHostAddressTests.status(daemon)
        guard case .array(let drivers)? = status["drivers"] else { return nil }
        return drivers.first { $0["address"] == .string(D.address) }?["desktop-battery"]
    }

    @Test("AirPods: the lowest bud reaches BlueZ's Battery1 (Source Earshot), follows changes, goes on disconnect, comes back after BlueZ restarts")
    func airPods() async throws {
        try await Self.withWorld { sandbox, firstBlueZ, daemon, loopback in
            var bluez = firstBlueZ
            try await Self.connectAirPods(bluez)
            var mark = bluez.logMark()
            try await bluez.aapBattery(D.address, left: 80, right: 35, chargingCase: 5)
            try await bluez.waitForLines(
                inOrder: [
                    "battery provider /org/earshot/battery registered by", "battery \(Self.device) added by :", "battery \(Self.device) percentage 35",
                ], since: mark)
            #expect(bluez.process.logTail(lines: 100).contains(":/org/earshot/battery source Earshot"))
            try await Self.expectDesktopBattery("provided", daemon)
            let shown = try await Self.shownAirPods(daemon, bluez)
            #expect(shown.contains("desktop battery: shown (Earshot is BlueZ's battery provider)"), "\(shown)")
            // Each part stays where it was.
            #expect(shown.contains("battery left 80% right 35% case 5%"), "\(shown)")

            mark = bluez.logMark()
            try await bluez.aapBattery(D.address, left: 30, right: 60, chargingCase: 5)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 30", since: mark)

            mark = bluez.logMark()
            try await bluez.disconnect(D.address)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) removed", since: mark)

            // BlueZ restarts (a new bluetoothd knows no provider): Earshot registers again.
            bluez.stop()
            bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            try await bluez.addAirPods(D.address)
            try await Self.connectAirPods(bluez)
            mark = bluez.logMark()
            try await bluez.aapBattery(D.address, left: 70, right: 72, chargingCase: 5)
            try await bluez.waitForLines(
                inOrder: ["battery provider /org/earshot/battery registered by", "battery \(Self.device) percentage 70"], since: mark)
        }
    }

    @Test("Galaxy Buds: the lower bud over the RFCOMM channel")
    func galaxyBuds() async throws {
        try await Self.withWorld(galaxyBuds: true) { _, bluez, daemon, _ in
            let mark = bluez.logMark()
            try await bluez.connect(D.address)
            _ = try await bluez.waitForLine(containing: "buds \(D.address) connected", since: mark, timeout: .seconds(20))
            try await bluez.budsStatus(D.address, left: .wearing, right: .wearing, batteries: (64, 58, 90))
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 58", since: mark)
            try await Self.expectDesktopBattery("provided", daemon)
        }
    }

    @Test("Another provider first (PipeWire over hands-free): left alone, provided-by-other; once it goes, Earshot's battery is taken")
    func anotherProviderFirst() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            try await bluez.run("battery other \(D.address) 60")
            let mark = try await Self.connectWithBattery(bluez)
            try await Self.expectDesktopBattery("provided-by-other", daemon)
            let shown = try await Self.shownAirPods(daemon, bluez)
            #expect(shown.contains("desktop battery: shown from another provider"), "\(shown)")
            try await bluez.run("battery other-gone \(D.address)")
            try await bluez.waitForLines(inOrder: ["battery \(Self.device) removed", "source Earshot", "battery \(Self.device) percentage 40"], since: mark)
            try await daemon.process.waitForLog(containing: Self.provided)
        }
    }

    @Test("BlueZ without the manager (Debian 12 without Experimental): said once at info, no-provider-manager; the manager appears → registered")
    func noProviderManager() async throws {
        try await Self.withWorld(standIn: ["--no-battery-manager"]) { _, bluez, daemon, _ in
            _ = try await Self.connectWithBattery(bluez)
            try await Self.expectDesktopBattery("no-provider-manager", daemon)
            try await bluez.aapBattery(D.address, left: 45, right: 40, chargingCase: 5)
            let missing = "has no battery provider manager (org.bluez.BatteryProviderManager1)"
            #expect(daemon.process.logCount(of: missing) == 1)
            #expect(daemon.process.logCount(of: "Experimental = true in /etc/bluetooth/main.conf") == 1)
            let mark = bluez.logMark()
            try await bluez.run("battery manager add hci0")
            try await bluez.waitForLines(inOrder: ["battery provider /org/earshot/battery registered by", "battery \(Self.device) percentage 40"], since: mark)
            try await daemon.process.waitForLog(containing: Self.provided)
            #expect(daemon.process.logCount(of: missing) == 1)
        }
    }

    @Test("An adapter unplugged and plugged in again: Earshot registers there again")
    func adapterRemovedAndAdded() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            let registered = "battery provider /org/earshot/battery registered by"
            var mark = try await Self.connectWithBattery(bluez)
            try await bluez.waitForLines(inOrder: [registered, "battery \(Self.device) percentage 40"], since: mark)
            try await daemon.process.waitForLog(containing: Self.provided)

            mark = bluez.logMark()
            try await bluez.run("remove hci0")
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) removed", since: mark)
            try await bluez.run("add hci0 11:22:33:44:55:66")
            try await bluez.addAirPods(D.address)
            mark = try await Self.connectWithBattery(bluez, left: 70, right: 72)
            try await bluez.waitForLines(inOrder: [registered, "battery \(Self.device) percentage 70"], since: mark)
            #expect(bluez.process.logCount(of: registered) == 2)
        }
    }

    /// The levels the stand-in's Battery1 took after `mark`, in order.
    static func percentageLines(_ bluez: BlueZStandIn, since mark: Int) -> [String] {
        guard let log = bluez.process.logFile, let data = try? Data(contentsOf: log), data.count > mark else { return [] }
        return String(decoding: data[mark...], as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("battery \(device) percentage ") }.map { String($0.split(separator: " ").last ?? "") }
    }

    @Test("battery-to-desktop = false: off, nothing registered; turned on by a config reload → provided")
    func off() async throws {
        try await Self.withWorld(config: "[drivers]\nbattery-to-desktop = false\n") { sandbox, bluez, daemon, _ in
            _ = try await Self.connectWithBattery(bluez)
            try await Self.expectDesktopBattery("off", daemon)
            #expect(!bluez.process.logTail(lines: 400).contains("battery provider"), "\(bluez.process.logTail(lines: 400))")
            let mark = bluez.logMark()
            try DaemonReliabilityTests.writeConfig(sandbox, "[drivers]\nbattery-to-desktop = true\n")
            try await bluez.waitForLines(inOrder: ["battery provider /org/earshot/battery registered by", "battery \(Self.device) percentage 40"], since: mark)
            try await daemon.process.waitForLog(containing: Self.provided)
        }
    }

    @Test("Hostile: 1000 battery packets a second → a few PropertiesChanged a second, the last level delivered; a level over 100 is not shown")
    func flood() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            var mark = try await Self.connectWithBattery(bluez, left: 90, right: 90)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 90", since: mark)
            mark = bluez.logMark()
            let started = ContinuousClock.now
            try await bluez.run("aap battery-flood \(D.address) 2000 2 17")
            _ = try await bluez.waitForLine(containing: "aap \(D.address) battery flood done", since: mark, timeout: .seconds(20))
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 17", since: mark)
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let lines = bluez.process.logTail(lines: 3000).split(separator: "\n").filter { $0.contains("battery \(Self.device) percentage") }
            // 90 before the mark, then at most ~4 a second (250 ms apart) and the last.
            let updates = lines.count - 1
            #expect(updates >= 1)
            #expect(Double(updates) <= (seconds + 1) * 5, "\(updates) updates in \(seconds) s")
            #expect(lines.last?.hasSuffix("percentage 17") == true)
            #expect(daemon.process.logCount(of: "desktop battery of") >= 1)

            // Over 100: the desktop keeps the last real level; the next real one follows.
            mark = bluez.logMark()
            try await bluez.aapBattery(D.address, left: 150, right: 150, chargingCase: 5)
            try await bluez.aapBattery(D.address, left: 44, right: 44, chargingCase: 5)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 44", since: mark)
            let after = bluez.process.logTail(lines: 50)
            #expect(!after.contains("percentage 150") && !after.contains("ignored percentage"), "\(after)")

            // A malformed battery packet (cut inside its first component) changes nothing either.
            mark = bluez.logMark()
            try await bluez.aapRaw(D.address, [0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x03, 0x04, 0x01])
            try await bluez.aapBattery(D.address, left: 43, right: 43, chargingCase: 5)
            try await bluez.waitForLines(inOrder: ["battery \(Self.device) percentage 43"], since: mark)
            #expect(Self.percentageLines(bluez, since: mark) == ["43"])
        }
    }

    @Test("BlueZ answers Register with an error: said once, no-provider-manager, no retry loop")
    func registerRefused() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            try await bluez.run("battery manager fail org.bluez.Error.Failed")
            _ = try await Self.connectWithBattery(bluez)
            try await Self.expectDesktopBattery("no-provider-manager", daemon)
            try await bluez.aapBattery(D.address, left: 45, right: 40, chargingCase: 5)
            try await bluez.aapBattery(D.address, left: 44, right: 40, chargingCase: 5)
            #expect(daemon.process.logCount(of: "BlueZ did not take Earshot's battery provider") == 1)
            #expect(daemon.process.logCount(of: "org.bluez.Error.Failed") == 1)
        }
    }

    @Test("BlueZ never answers Register: bounded (the call times out), said once")
    func registerUnanswered() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            try await bluez.run("battery manager hang")
            let mark = try await Self.connectWithBattery(bluez)
            _ = try await bluez.waitForLine(containing: "battery provider /org/earshot/battery left unanswered", since: mark)
            try await Self.expectDesktopBattery("no-provider-manager", daemon, timeout: .seconds(20))
            #expect(daemon.process.logCount(of: "BlueZ did not take Earshot's battery provider") == 1)
            // The daemon still answers, and the AirPods' parts are still read.
            try await bluez.aapBattery(D.address, left: 33, right: 40, chargingCase: 5)
            #expect(try daemon.earshot("status").status == 0)
        }
    }

    /// The real desktop component: UPower reads BlueZ's Battery1 over the (private) system bus.
    /// Missing upowerd is a failure, never a skip (.ci/run installs it).
    @Test("UPower lists the AirPods with the lowest bud's percentage (upower --dump)")
    func upower() async throws {
        let upowerd = "/usr/libexec/upowerd"
        let upower = "/usr/bin/upower"
        guard FileManager.default.isExecutableFile(atPath: upowerd), FileManager.default.isExecutableFile(atPath: upower) else {
            throw FixtureError("\(upowerd) or \(upower) is missing: install Debian's upower package (apt-get install upower)")
        }
        try await Self.withWorld { sandbox, bluez, _, _ in
            // Its history in the sandbox, not /var/lib/upower; line-buffered output to wait on.
            let history = sandbox.root.appendingPathComponent("upower").path
            try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true)
            let daemon = try sandbox.spawn("upowerd", ["/usr/bin/stdbuf", "-oL", "-eL", upowerd, "-v"], extraEnvironment: ["UPOWER_HISTORY_DIR": history])
            defer { daemon.stop() }
            try await daemon.waitForLog(containing: "BlueZ appeared")
            let monitor = try sandbox.spawn("upower-monitor", ["/usr/bin/stdbuf", "-oL", upower, "--monitor-detail"])
            defer { monitor.stop() }
            try await Self.connectAirPods(bluez)
            try await bluez.aapBattery(D.address, left: 80, right: 35, chargingCase: 5)
            try await monitor.waitForLog(containing: "35%", timeout: .seconds(20))
            let dump = try sandbox.run([upower, "--dump"])
            #expect(dump.status == 0)
            let lines = dump.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.contains { $0.hasPrefix("native-path:") && $0.hasSuffix(Self.device) }, "\(dump.output)")
            #expect(lines.contains { $0.hasPrefix("model:") && $0.hasSuffix("AirPods Pro") }, "\(dump.output)")
            #expect(lines.contains { $0.hasPrefix("percentage:") && $0.hasSuffix(" 35%") }, "\(dump.output)")
        }
    }

    @Test("Hostile: the device removed in the middle of a battery flood: its battery goes, the daemon goes on")
    func deviceVanishesMidFlood() async throws {
        try await Self.withWorld { _, bluez, daemon, _ in
            let mark = try await Self.connectWithBattery(bluez, left: 60, right: 60)
            _ = try await bluez.waitForLine(containing: "battery \(Self.device) percentage 60", since: mark)
            try await bluez.run("aap battery-flood \(D.address) 2000 2 17")
            try await bluez.removeDevice(D.address)
            try await bluez.waitForLines(inOrder: ["battery \(Self.device) removed"], since: mark)
            _ = try await bluez.waitForLine(containing: "aap \(D.address) battery flood stopped", since: mark)
            // No battery for a device that is gone; the daemon answers and knows no driver.
            #expect(try daemon.earshot("status").status == 0)
            #expect(!bluez.process.logTail(lines: 30).contains("ignored: no such device"))
        }
    }
}
