import AudioGraph
@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import SystemBridge
import Synchronization
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built-in headset drivers with nothing set up: real PipeWire + WirePlumber + mpv, a
/// stand-in BlueZ on a private system bus with a fake AirPods or Galaxy Buds, and the fake
/// device's end of the channel played by the stand-in (AAP over a loopback socket, Galaxy Buds
/// over the socket BlueZ hands over in Profile1.NewConnection). No `earshot accessory` command
/// and no reporter anywhere: the wear cycle moves mpv and pauses and resumes it.
@Suite("Built-in drivers end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct DriverEndToEndTests {
    typealias D = DaemonFixture

    /// How the fake device says where its buds are.
    struct Wear {
        let both: @Sendable (BlueZStandIn) async throws -> Void
        let oneOut: @Sendable (BlueZStandIn) async throws -> Void
        let noneIn: @Sendable (BlueZStandIn) async throws -> Void
    }

    static let airPods = Wear(
        both: { try await $0.aapEar(D.address, primary: .inEar, secondary: .inEar) },
        oneOut: { try await $0.aapEar(D.address, primary: .inEar, secondary: .outOfEar) },
        noneIn: { try await $0.aapEar(D.address, primary: .outOfEar, secondary: .inCase) })
    static let galaxyBuds = Wear(
        both: { try await $0.budsStatus(D.address, left: .wearing, right: .wearing) },
        oneOut: { try await $0.budsSplit(D.address, left: .wearing, right: .idle) },
        noneIn: { try await $0.budsStatus(D.address, left: .idle, right: .inCase) })

    @Test("AirPods (AAP): both in → mpv on the headphones; one out → stays; both out → after the grace the speakers, paused; back in → resumed there")
    func airPodsWearCycle() async throws {
        try await wearCycle(family: "aap", reporter: "org.earshot.driver.aap", wear: Self.airPods) { bluez in
            try await bluez.addAirPods(D.address)
        } connected: { bluez, mark in
            // The handshake and the notification request came before any ear report.
            _ = try await bluez.waitForLine(containing: "aap \(D.address) received 00000400010002000000000000000000", since: mark)
            _ = try await bluez.waitForLine(containing: "aap \(D.address) received 040004000f00", since: mark)
        }
    }

    @Test("Galaxy Buds: the same cycle over the RFCOMM channel BlueZ hands over")
    func galaxyBudsWearCycle() async throws {
        try await wearCycle(family: "galaxy-buds", reporter: "org.earshot.driver.galaxy-buds", wear: Self.galaxyBuds) { bluez in
            try await bluez.addGalaxyBuds(D.address)
        } connected: { bluez, mark in
            _ = try await bluez.waitForLine(containing: "buds \(D.address) connected", since: mark)
            // Only BlueZ may hand a channel over: another client on the bus offering a socket of
            // its own to Earshot's Profile1 object is refused.
            let registered = try await bluez.waitForLine(containing: "registered by", since: mark)
            let words = registered.split(separator: " ").map(String.init)
            let owner = try #require(words.firstIndex(of: "by").map { words[$0 + 1] })
            let path = try #require(words.last)
            let intruder = try DBusConnection(.address(try #require(bluez.systemBusAddress)))
            defer { intruder.close() }
            let (mine, theirs) = try SocketPairForTests.make()
            defer { Glibc.close(mine); Glibc.close(theirs) }
            await #expect(throws: DBusError.self) {
                _ = try await intruder.call(
                    destination: owner, path: path, interface: "org.bluez.Profile1", member: "NewConnection",
                    [.objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"), .fileDescriptor(try DBusFileDescriptor(duplicating: theirs)), .properties([:])])
            }
        }
    }

    @Test("AirPods held by another program (LibrePods): one log line naming it, retried with backoff; released → the driver connects and reads them")
    func heldChannel() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback])
            defer { daemon.process.stop() }
            try await bluez.addAirPods(D.address)
            try await bluez.connect(D.address)
            try await bluez.aapHold(D.address)
            let mark = bluez.logMark()
            // The first attempt may have won the race with the hold: drop it, so the next is
            // refused (or it came after the hold, and there is nothing to drop).
            try await bluez.aapCloseIfAny(D.address)
            try await daemon.process.waitForLog(containing: "held by another program (probably LibrePods or MagicPods)", timeout: .seconds(20))
            let status = try daemon.earshot("status").output
            #expect(status.contains("driver: \(D.address) aap (AirPods Pro) held"), "\(status)")
            try await bluez.aapRelease(D.address)
            // Connected again, and that connection's handshake and notification request came
            // (an ear report before them is not one the earbuds would send).
            try await bluez.waitForLines(
                inOrder: [
                    "aap \(D.address) connected", "aap \(D.address) received 00000400010002000000000000000000",
                    "aap \(D.address) received 040004000f00",
                ], since: mark)
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.aapEar(D.address, primary: .inEar, secondary: .inEar)
            let registered = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            #expect(registered["reporter"] == .string("org.earshot.driver.aap"))
            let log = daemon.process.logTail(lines: 400)
            #expect(log.components(separatedBy: "held by another program").count == 2, "said once: \(log)")
        }
    }

    private func wearCycle(
        family: String, reporter: String, wear: Wear, add: (BlueZStandIn) async throws -> Void,
        connected: (BlueZStandIn, Int) async throws -> Void
    ) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            try DaemonReliabilityTests.writeConfig(sandbox, "[timing]\noff-grace-ms = 300\n")
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            let (mpvProcess, mpv) = try await sandbox.startPlayer(name: "mpv")
            defer { mpvProcess.stop() }
            let packetLog = sandbox.root.appendingPathComponent("packets.log").path
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback, "--log-driver-packets", packetLog])
            defer { daemon.process.stop() }
            let events = try EventSubscription(socket: daemon.socketPath)
            try await add(bluez)
            let mark = bluez.logMark()
            try await bluez.connect(D.address)
            try await connected(bluez, mark)

            // Out at first: registered off-head by the driver, the speakers keep the output.
            try await wear.noneIn(bluez)
            let registered = try await events.next("accessory") { $0["accessory"] == .string(D.address) }
            #expect(registered["reporter"] == .string(reporter))
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            // Both in: the output and mpv move to the headphones.
            try await wear.both(bluez)
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            // One out: still worn (the either rule); the next route change is the removal's.
            let fromHere = try EventSubscription(socket: daemon.socketPath)
            try await wear.oneOut(bluez)
            try await wear.noneIn(bluez)
            let paused = try await events.next("playback") { $0["action"] == .string("paused") }
            #expect(paused["reason"] == .string("accessory-removed"))
            #expect(paused["accessory"] == .string(D.address))
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            let removal = try await fromHere.next("route-change")
            #expect(removal["current"] == .string(D.speakers), "one bud out moved nothing")
            // Back in: the headphones again, and mpv resumed.
            try await wear.both(bluez)
            let resumed = try await events.next("playback") { $0["action"] == .string("resumed") }
            #expect(resumed["reason"] == .string("accessory-returned"))
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])

            let status = try daemon.earshot("status").output
            #expect(status.contains("driver: \(D.address) \(family)"), "\(status)")
            #expect(status.contains("connected"))
            let shown = try daemon.earshot("accessory", "show", D.address).output
            #expect(shown.contains("reporter: \(reporter)"), "\(shown)")
            #expect(shown.contains("driver: \(D.address) \(family)"))

            // The packet log replays through `earshot driver decode` (what a bug report sends).
            let decoded = try daemon.earshot("driver", "decode", packetLog)
            #expect(decoded.status == 0, "\(decoded.output)")
            #expect(decoded.output.contains(#""kind":"ear-detection""#), "\(decoded.output)")
            #expect(decoded.output.contains(#""placement":"in-ear""#))
            #expect(decoded.output.contains(#""placement":"off-head""#))

            // The device disconnects: the driver ends the registration.
            try await bluez.disconnect(D.address)
            _ = try await events.next("accessory") { $0["accessory"] == .string(D.address) && $0["change"] == .string("unregistered") }
        }
    }
}

/// A connected Unix socket pair, for handing a descriptor over D-Bus.
enum SocketPairForTests {
    static func make() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw FixtureError("socketpair: \(String(cString: strerror(errno)))")
        }
        return (ends[0], ends[1])
    }
}

/// Issue 21: an AirPods peer that answers as real firmware does — replies to the handshake,
/// acknowledges the feature flags, misses the first notification request, reports a bud as
/// disconnected (0x03) — and one that floods ear toggles.
@Suite("AirPods as real firmware speaks", .serialized, .timeLimit(.minutes(4)), .blockingCalls)
struct RealFirmwareDriverTests {
    typealias D = DaemonFixture

    @Test("the first notification request missed: the driver asks again and reads the buds; 0x03 (disconnected) is out")
    func missedRequestAndDisconnectedBud() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            try await bluez.addAirPods(D.address)
            try await bluez.connect(D.address)
            // The ear state before anyone connects: the peer only remembers it (no connection yet).
            try await bluez.run("aap answer \(D.address) on")
            try await bluez.run("aap ignore-requests \(D.address) 1")
            let mark = bluez.logMark()
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback])
            defer { daemon.process.stop() }
            // Handshake, its reply, the feature flags, the request ignored, the request again.
            try await bluez.waitForLines(
                inOrder: [
                    "aap \(D.address) received 00000400010002000000000000000000", "aap \(D.address) received 040004004d00",
                    "aap \(D.address) ignored a notification request", "aap \(D.address) received 040004000f00",
                ], since: mark, timeout: .seconds(30))
            // The answer to the second request is the case (both buds in it): registered off-head.
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.aapEar(D.address, primary: .inEar, secondary: .inEar)
            _ = try await events.next("route-change", timeout: .seconds(10)) { $0["current"] == .string(D.headphones) }
            // One bud out, the other reported disconnected (0x03): not worn.
            try await bluez.aapEar(D.address, primary: .outOfEar, secondary: .disconnected)
            let away = try await events.next("route-change", timeout: .seconds(10)) { $0["current"] == .string(D.speakers) }
            #expect(away["reason"] == .string("placement-changed"))
            let log = daemon.process.logTail(lines: 400)
            #expect(log.contains("no battery or ear packet yet; asking again"), "\(log)")
        }
    }

    @Test("Galaxy Buds Pro: the real revision-10 status frame (header 29 0C, flag bits set) is read, not dropped: left bud worn, the output moves")
    func budsProRealFrame() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            // A Buds Pro as BlueZ lists one: Samsung's Modalias, the Serial Port service.
            try await bluez.run(
                "device add \(D.address) 'Galaxy Buds Pro (5A3C)' --modalias bluetooth:v0075pA010d0001 --uuids 00001101-0000-1000-8000-00805f9b34fb,0000110b-0000-1000-8000-00805f9b34fb")
            let mark = bluez.logMark()
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback])
            defer { daemon.process.stop() }
            let events = try EventSubscription(socket: daemon.socketPath)
            // The graph first: a placement said before it makes the first decision follow it, as
            // `initial` (policy §5), which a loaded run saw here (issue 28).
            try await daemon.process.waitForLog(containing: "connected to PipeWire")
            try await bluez.connect(D.address)
            _ = try await bluez.waitForLine(containing: "buds \(D.address) connected", since: mark)
            // GalaxyBudsClient's Buds Pro rev 10 extended status (left in the ear, right in the case).
            let frame = RealFirmwareFrames.budsProRevision10
            try await bluez.budsRaw(D.address, frame)
            let moved = try await events.next("route-change", timeout: .seconds(10)) { $0["current"] == .string(D.headphones) }
            #expect(moved["reason"] == .string("placement-changed"))
            let log = daemon.process.logTail(lines: 400)
            #expect(!log.contains("impossible size"), "\(log)")
        }
    }

    @Test("a flood of ear toggles ending with both buds out: the speakers within the grace of the last packet, a few route changes, the channel's end seen at once", arguments: [10, 100, 1000])
    func flood(count: Int) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], systemBus: true)) { sandbox in
            let loopback = sandbox.root.appendingPathComponent("bluetooth").path
            try FileManager.default.createDirectory(atPath: loopback, withIntermediateDirectories: true)
            let bluez = try BlueZStandIn(sandbox: sandbox, adapters: ["hci0": "11:22:33:44:55:66"], loopbackDir: loopback)
            defer { bluez.stop() }
            try await bluez.waitUntilReady()
            try await bluez.addAirPods(D.address)
            try await bluez.connect(D.address)
            let daemon = try D.start(in: sandbox, arguments: ["--bluetooth-loopback", loopback])
            defer { daemon.process.stop() }
            try await bluez.waitForLine(containing: "aap \(D.address) received 040004000f00", timeout: .seconds(20))
            let events = try EventSubscription(socket: daemon.socketPath)
            try await bluez.aapEar(D.address, primary: .inEar, secondary: .inEar)
            _ = try await events.next("route-change", timeout: .seconds(10)) { $0["current"] == .string(D.headphones) }

            let routes = RouteCount()
            let counting = Task {
                while let _ = try? await events.next("route-change", timeout: .seconds(30)) { routes.add() }
            }
            defer { counting.cancel() }
            let mark = bluez.logMark()
            try await bluez.run("aap flood \(D.address) \(count) 1")
            _ = try await bluez.waitForLine(containing: "aap \(D.address) flood done", since: mark, timeout: .seconds(20))
            let done = ContinuousClock.now
            // Back on the speakers within the off-grace (400 ms) and a generous margin for a
            // loaded 2-core machine (the bench measures the real figure).
            _ = try await sandbox.observer.waitUntil("the speakers after the flood", timeout: .seconds(10)) { $0.isDefault(D.speakers) }
            let late = ContinuousClock.now - done
            // The flood is not worked through toggle by toggle: the route changes counted below
            // say so (a bound in seconds here is a loaded machine's to miss, issue 28).
            print("ear-toggle flood: the speakers \(late) after the last packet")
            // A few, never one per toggle (before issue 21: hundreds). The flood itself is one
            // on-head; a stall of the loaded machine longer than the off-grace mid-flood lets an
            // off-head take effect and the next on-head take the output back (two more each):
            // 4 was seen once in a full run of both stacks side by side.
            #expect(routes.value <= 5, "\(routes.value) route changes for one burst")
            // The channel ending is seen at once, not behind a backlog.
            try await bluez.run("aap close \(D.address)")
            try await daemon.process.waitForLog(containing: "channel closed", timeout: .seconds(5))
        }
    }
}

/// A counter shared with a task.
final class RouteCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Frames real firmware sent, as GalaxyBudsClient keeps them (timschneeb/GalaxyBudsClient,
/// commit 5bbcd94, `GalaxyBudsClient.Tests/TestData/ExtendedStatusUpdate/`; the decoder tests in
/// Tests/AccessoryDriversTests/RealFirmwareTests.swift read the same bytes).
enum RealFirmwareFrames {
    static let budsProRevision10: [UInt8] = hex(
        "fd290c610a02595e010113640001002200002a012a0101000355000201000002001000010000220200009d24dd")

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }
}
