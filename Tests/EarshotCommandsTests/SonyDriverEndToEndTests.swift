import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 30: Sony sets with nothing set up — real PipeWire + WirePlumber + mpv, the BlueZ
/// stand-in's Sony peer (scripts/testing/standin_sony.py, written from the public notes apart
/// from the driver) on the RFCOMM channel BlueZ hands over, its first ConnectProfile answered
/// "br-connection-busy" as real BlueZ does.
@Suite("Sony driver end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct SonyDriverEndToEndTests {
    typealias D = DaemonFixture

    /// A sandbox with the speakers and the set's sink, the stand-in, mpv and the daemon.
    private func withSony(
        _ model: BlueZStandIn.SonyModel, config: String = "[timing]\noff-grace-ms = 300\n",
        _ body: (PipeWireSandbox, BlueZStandIn, DaemonFixture, ObjectID, String) async throws -> Void
    ) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, config)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"])
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let (mpvProcess, mpv) = try await sandbox.startPlayer(name: "mpv")
            defer { mpvProcess.stop() }
            let packetLog = sandbox.root.appendingPathComponent("packets.log").path
            let daemon = try D.start(in: sandbox, arguments: ["--log-driver-packets", packetLog])
            defer { daemon.process.stop() }
            try await bluez.addSony(D.address, model: model)
            try await body(sandbox, bluez, daemon, mpv.id, packetLog)
        }
    }

    @Test("WH-1000XM6: the busy first ConnectProfile is asked again; put on → mpv on the set; taken off → the speakers, paused; on → resumed; the packet log decodes")
    func headphonesWearCycle() async throws {
        try await withSony(.xm6) { _, bluez, daemon, mpv, packetLog in
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.connectSony(D.address, until: ["sony \(D.address) connected", "sony \(D.address) handshake v2"])
            try await daemon.process.waitForLog(containing: "BlueZ is busy; asking again")

            // Off at first: registered off-head by the driver, the speakers keep the output.
            try await bluez.sonyWear(D.address, on: false)
            let registered = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            #expect(registered["reporter"] == .string("org.earshot.driver.sony"))
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv])
            try await bluez.sonyBattery(D.address, level: 70)
            try await daemon.process.waitForLog(containing: "battery headset 70%")
            // On: the output and mpv move to the set.
            try await bluez.sonyWear(D.address, on: true)
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])
            // Off: after the grace the speakers, mpv paused.
            try await bluez.sonyWear(D.address, on: false)
            let paused = try await events.next("playback") { $0["action"] == .string("paused") }
            #expect(paused["reason"] == .string("accessory-removed"))
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv])
            // On again: resumed on the set.
            try await bluez.sonyWear(D.address, on: true)
            let resumed = try await events.next("playback") { $0["action"] == .string("resumed") }
            #expect(resumed["reason"] == .string("accessory-returned"))
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])

            let status = try daemon.earshot("status").output
            #expect(status.contains("driver: \(D.address) sony (WH-1000XM6) connected, battery headset 70%"), "\(status)")
            #expect(status.contains("wear from table-1"), "\(status)")
            let shown = try daemon.earshot("accessory", "show", D.address).output
            #expect(shown.contains("reporter: org.earshot.driver.sony"), "\(shown)")
            #expect(shown.contains("placement: on-head"), "\(shown)")

            let decoded = try daemon.earshot("driver", "decode", packetLog)
            #expect(decoded.status == 0, "\(decoded.output)")
            #expect(decoded.output.contains(#""placement":"on-head""#), "\(decoded.output)")
            #expect(decoded.output.contains(#""placement":"off-head""#))
            #expect(!decoded.output.contains(#""kind":"malformed""#), "\(decoded.output)")

            try await bluez.disconnect(D.address)
            _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) && $0["change"] == .string("unregistered") }
        }
    }

    @Test("WF-1000XM5 earbuds: the table-2 wearing status, read again on each logged wear change; one bud out stays worn, both out → the speakers")
    func earbudsWearCycle() async throws {
        try await withSony(.wfXM5) { _, bluez, daemon, mpv, _ in
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.connectSony(D.address, until: ["sony \(D.address) handshake v2", "sony \(D.address) logging on"])
            try await bluez.sonyWear(D.address, left: true, right: true)
            let registered = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            #expect(registered["reporter"] == .string("org.earshot.driver.sony"))
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])
            // One out: still worn (the either rule); the next route change is the removal's.
            let fromHere = try EventSubscription(socket: daemon.socketPath)
            try await bluez.sonyWear(D.address, left: true, right: false)
            try await bluez.sonyWear(D.address, left: false, right: false)
            let paused = try await events.next("playback") { $0["action"] == .string("paused") }
            #expect(paused["reason"] == .string("accessory-removed"))
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv])
            let removal = try await fromHere.next("route-change")
            #expect(removal["current"] == .string(D.speakers), "one bud out moved nothing")
            try await bluez.sonyBattery(D.address, left: 60, right: 55, chargingCase: 40)
            try await daemon.process.waitForLog(containing: "battery left 60% right 55% case 40%")
            let status = try daemon.earshot("status").output
            #expect(status.contains("sony-earbuds") || status.contains("driver: \(D.address) sony"), "\(status)")
            #expect(status.contains("wear from table-2"), "\(status)")
        }
    }

    @Test("WH-1000XM4 (protocol v1, no wear message): read for its battery, never registered with an invented placement; status and accessory show say it reports no wear and that a reporter can")
    func noWearModel() async throws {
        try await withSony(.xm4) { _, bluez, daemon, mpv, _ in
            try await bluez.connectSony(D.address, until: ["sony \(D.address) handshake v1"])
            try await daemon.process.waitForLog(containing: "reports no wear")
            try await bluez.sonyBattery(D.address, level: 64)
            try await daemon.process.waitForLog(containing: "battery headset 64%")
            let status = try daemon.earshot("status").output
            #expect(status.contains("reports no wear"), "\(status)")
            #expect(status.contains("a reporter of your own can say whether it is worn"), "\(status)")
            // Not registered: an error (exit 1), whose message says what the driver knows.
            let shown = try daemon.sandbox.run(["/bin/sh", "-c", "\"$0\" accessory show \(D.address) 2>&1", daemon.binary])
            #expect(shown.status != 0)
            #expect(shown.output.contains("reports no wear"), "\(shown.output)")
            #expect(shown.output.contains("battery headset 64%"), "\(shown.output)")
            let listed = try daemon.earshot("accessory", "show").output
            #expect(!listed.contains(D.address), "no registration: \(listed)")
            // A reporter of the user's own says it is worn: the output follows it.
            try daemon.register(placement: "on-head")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])
            #expect(daemon.process.logCount(of: "reports no wear") == 1, "said once")
        }
    }

    @Test("a set that never answers the handshake: bounded retries, said once, nothing registered")
    func silentSet() async throws {
        try await withSony(.xm6) { _, bluez, daemon, _, _ in
            try await bluez.run("sony mute \(D.address) on")
            let mark = bluez.logMark()
            try await bluez.connect(D.address)
            try await daemon.process.waitForLog(containing: "no answer to the MDR handshake", timeout: .seconds(30))
            // The second connection's handshakes went out too: still said once.
            try await bluez.waitForLines(inOrder: ["sony \(D.address) closed", "sony \(D.address) connected"], since: mark, timeout: .seconds(30))
            #expect(daemon.process.logCount(of: "no answer to the MDR handshake") == 1)
            let listed = try daemon.earshot("accessory", "show").output
            #expect(!listed.contains(D.address), "\(listed)")
            // It answers again: the driver reads it on its next connection (the backoff's).
            let events = try EventSubscription(socket: daemon.socketPath)
            let unmuted = bluez.logMark()
            try await bluez.run("sony mute \(D.address) off")
            try await bluez.waitForLines(inOrder: ["sony \(D.address) handshake v2"], since: unmuted, timeout: .seconds(60))
            try await bluez.sonyWear(D.address, on: true)
            _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
        }
    }

    @Test("a hostile set: garbage, an ACK storm, a 4 GiB length, a frame split at every byte and two glued: the wear frames among them still move the output; a flood of 1000 toggles is a few route changes")
    func hostileSet() async throws {
        try await withSony(.xm6) { sandbox, bluez, daemon, mpv, _ in
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.connectSony(D.address, until: ["sony \(D.address) handshake v2", "sony \(D.address) received 0c0"])
            try await bluez.sonyWear(D.address, on: false)
            _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            try await bluez.run("sony garbage \(D.address) 2000")
            try await bluez.run("sony ack-storm \(D.address) 1000")
            // A table-1 frame announcing 4 GiB, never completed: dropped at its header.
            try await bluez.run("sony raw \(D.address) 3e0c00ffffffff")
            try await bluez.run("sony split \(D.address)")
            try await bluez.sonyWear(D.address, on: true)
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])
            try await bluez.run("sony glue \(D.address)")
            try await bluez.sonyWear(D.address, on: false)
            try await bluez.sonyWear(D.address, on: true)
            // Off then on in one read: the newest says worn, and the output stays.
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv])

            let routes = RouteCount()
            let counting = Task {
                while let _ = try? await events.next("route-change", timeout: .seconds(30)) { routes.add() }
            }
            defer { counting.cancel() }
            let flooding = bluez.logMark()
            try await bluez.run("sony flood \(D.address) 1000 1")
            _ = try await bluez.waitForLine(containing: "sony \(D.address) flood done", since: flooding, timeout: .seconds(30))
            _ = try await sandbox.observer.waitUntil("the speakers after the flood", timeout: .seconds(10)) { $0.isDefault(D.speakers) }
            // A few, never one per toggle (see DriverEndToEndTests.flood for why up to 5).
            #expect(routes.value <= 5, "\(routes.value) route changes for one burst")
            let status = try daemon.earshot("status").output
            #expect(status.contains("driver: \(D.address) sony (WH-1000XM6) connected"), "\(status)")
            #expect(daemon.process.logCount(of: "dropped a frame") <= 16, "notes are bounded")
        }
    }

    @Test("held by another program (SonyHeadphonesClient): said once, retried with backoff; released → read")
    func heldChannel() async throws {
        try await withSony(.xm6) { _, bluez, daemon, _, _ in
            try await bluez.holdProfile("956c7b26-d49a-4ba8-b03f-b17d393cb6e2")
            try await bluez.connect(D.address)
            try await daemon.process.waitForLog(containing: "held by another program (probably SonyHeadphonesClient", timeout: .seconds(20))
            let events = try EventSubscription(socket: daemon.socketPath)
            let mark = bluez.logMark()
            try await bluez.releaseProfile("956c7b26-d49a-4ba8-b03f-b17d393cb6e2")
            try await bluez.waitForLines(inOrder: ["sony \(D.address) connected", "sony \(D.address) handshake v2"], since: mark, timeout: .seconds(60))
            try await bluez.sonyWear(D.address, on: true)
            _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            #expect(daemon.process.logCount(of: "held by another program") == 1)
        }
    }
}
