import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

@testable import EarshotCommands

/// Issue 38 with the programs people hear on a desktop: Debian's chromium and firefox-esr
/// (Xvfb, pipewire-pulse, MPRIS on the sandbox's bus) and paplay (no MPRIS), a real `earshot
/// daemon` and WirePlumber, on both stacks. Off the head: the browser Paused (Chromium's audio
/// comes from a child of the process owning its MPRIS name: matched as `ancestor`; Firefox's
/// from the owner: `pid`), paplay muted; back on: resumed and unmuted. The same when another host
/// takes the headset. A browser the user played meanwhile is left alone.
@Suite("Browsers and paplay when the headset leaves", .serialized, .timeLimit(.minutes(6)), .blockingCalls)
struct BrowserPlaybackEndToEndTests {
    typealias D = DaemonFixture
    static let sinks: [VirtualSink] = [.speakers(), .headphones()]
    static let host = "11:22:33:44:55:66"

    static func waitForMute(_ sandbox: PipeWireSandbox, _ stream: ObjectID, _ mute: Bool) async throws {
        _ = try await sandbox.observer.waitUntil("stream \(stream) mute \(mute)", timeout: .seconds(30)) { $0.nodes[stream]?.mute == mute }
    }

    /// The next `playback` event with `action`.
    static func next(_ events: EventSubscription, _ action: String) async throws -> [String: JSONValue] {
        while true {
            let event = try await events.next("playback", timeout: .seconds(30))
            if event["action"] == .string(action) { return event.objectFields }
        }
    }

    /// A daemon with the headset worn and registered (playing for this host), a browser and
    /// paplay playing on the headphones.
    static func start(
        _ kind: Browser.Kind, in sandbox: PipeWireSandbox
    ) async throws -> (daemon: D, browser: Browser, name: String, paplay: Node) {
        try DaemonReliabilityTests.writeConfig(sandbox, "host-addresses = [\"\(host)\"]\n[timing]\noff-grace-ms = 0\n")
        let daemon = try D.start(in: sandbox)
        let registered = try daemon.earshot(
            "accessory", "register", D.address, "--capabilities", "audio-switching,placement", "--placement", "on-head", "--primary-source", host,
            "--reporter", "org.earshot.test")
        #expect(registered.status == 0, "\(registered.output)")
        _ = try await sandbox.observer.waitUntil("the headphones are the default", timeout: .seconds(20)) { $0.isDefault(D.headphones) }
        let browser = try await Browser.start(kind, in: sandbox)
        _ = try await browser.waitForStream(linkedTo: D.headphones)
        let name = try await browser.waitForMPRISName()
        try await browser.waitForPlaybackStatus("Playing")
        let (_, paplay) = try await sandbox.startPulsePlayer(name: "paplay")
        _ = try await sandbox.observer.waitUntil("paplay on the headphones, its mute known", timeout: .seconds(30)) { graph in
            graph.linkedTargets(of: paplay.id).contains { $0.name == D.headphones } && graph.nodes[paplay.id]?.mute == false
        }
        return (daemon, browser, name, paplay)
    }

    @Test("off the head and back: the browser Paused and resumed (matched by its process tree), paplay muted and unmuted", arguments: Browser.Kind.allCases)
    func offAndOn(kind: Browser.Kind) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks, pulse: true)) { sandbox in
            let (daemon, browser, name, paplay) = try await Self.start(kind, in: sandbox)
            defer { browser.stop() }
            let events = try EventSubscription(socket: daemon.socketPath)
            try daemon.place("off-head")
            let paused = try await Self.next(events, "paused")
            #expect(paused["players"] == .array([.string(name)]))
            #expect(paused["matches"] == .object([name: .string(kind == .chromium ? "ancestor" : "pid")]))
            let held = try await Self.next(events, "held")
            #expect(held["streams"]?.canonicalText.contains("\"stream\":\(paplay.id)") == true, "\(held)")
            #expect(held["streams"]?.canonicalText.contains("\"application\":\"\(kind == .chromium ? "Chromium" : "Firefox")\"") == false, "the paused browser is not held")
            try await browser.waitForPlaybackStatus("Paused")
            try await Self.waitForMute(sandbox, paplay.id, true)
            _ = try await sandbox.observer.waitUntil("the speakers are the default", timeout: .seconds(20)) { $0.isDefault(D.speakers) }

            try daemon.place("on-head")
            let resumed = try await Self.next(events, "resumed")
            #expect(resumed["players"] == .array([.string(name)]))
            try await browser.waitForPlaybackStatus("Playing")
            try await Self.waitForMute(sandbox, paplay.id, false)
            // The browser plays into the headphones again (Chromium makes a new stream).
            _ = try await browser.waitForStream(linkedTo: D.headphones)
        }
    }

    @Test("taken by another host: Paused and muted (other-host); a browser the user played meanwhile on the speakers is left alone when the headset comes back", arguments: Browser.Kind.allCases)
    func otherHostAndUserPlay(kind: Browser.Kind) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks, pulse: true)) { sandbox in
            let (daemon, browser, name, paplay) = try await Self.start(kind, in: sandbox)
            defer { browser.stop() }
            let events = try EventSubscription(socket: daemon.socketPath)
            #expect(try daemon.earshot("accessory", "update", D.address, "--primary-source", "22:33:44:55:66:77", "--reporter", "org.earshot.test").status == 0)
            let paused = try await Self.next(events, "paused")
            #expect(paused["reason"] == .string("other-host"))
            #expect(paused["players"] == .array([.string(name)]))
            let held = try await Self.next(events, "held")
            #expect(held["reason"] == .string("other-host"))
            try await browser.waitForPlaybackStatus("Paused")
            try await Self.waitForMute(sandbox, paplay.id, true)
            _ = try await sandbox.observer.waitUntil("the speakers are the default", timeout: .seconds(20)) { $0.isDefault(D.speakers) }

            // The user plays the browser on the speakers: it is theirs now.
            try await browser.play()
            try await browser.waitForPlaybackStatus("Playing")
            _ = try await browser.waitForStream(linkedTo: D.speakers)
            #expect(try daemon.earshot("accessory", "update", D.address, "--primary-source", Self.host, "--reporter", "org.earshot.test").status == 0)
            let released = try await Self.next(events, "released")
            #expect(released["reason"] == .string("accessory-returned"))
            try await Self.waitForMute(sandbox, paplay.id, false)
            try await daemon.process.waitForLog(containing: "playback released (accessory-returned)")
            #expect(!daemon.process.logTail(lines: 400).contains("playback resumed"), "the user's own play is not Earshot's to resume")
            #expect(try await browser.playbackStatus() == "Playing")
        }
    }
}
