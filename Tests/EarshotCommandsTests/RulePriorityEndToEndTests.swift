import AudioGraph
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 12 item 9: the documented way to prefer a USB DAC works. With the tier order (rule
/// priority above the last choice, docs/policy.md §2) a `priority = 1000` rule beats speakers the
/// user once picked by hand, as soon as that pick stops holding (a sink arrives).
@Suite("Rule priority end to end", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct RulePriorityEndToEndTests {
    typealias D = DaemonFixture
    static let dac = "alsa_output.usb-Sandbox_DAC-00.analog-stereo"
    static let sinks: [VirtualSink] = [.speakers(), VirtualSink(name: dac, description: "Sandbox USB DAC", bus: "usb")]

    @Test("cooperative: a USB rule (priority 1000) wins over speakers picked with wpctl once the override ends")
    func usbRuleBeatsLastChoice() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks)) { sandbox in
            let config = sandbox.configDir.appendingPathComponent("usb-dac.toml")
            try "[[rule]]\nmatch = { \"device.bus\" = \"usb\" }\npriority = 1000\n".write(to: config, atomically: true, encoding: .utf8)
            // The DAC is the default before Earshot starts: starting changes nothing (issue 19),
            // so it stays, whatever the rule says.
            let before = try await sandbox.observer.waitUntil("both sinks", timeout: .seconds(10)) {
                $0.node(named: Self.dac) != nil && $0.node(named: D.speakers) != nil
            }
            let dacID = try #require(before.node(named: Self.dac)?.id)
            #expect(try sandbox.run(["wpctl", "set-default", String(dacID)]).status == 0)
            _ = try await sandbox.observer.waitUntil("the DAC configured", timeout: .seconds(10)) { $0.configuredDefaultSinkName == Self.dac }
            let daemon = try D.start(in: sandbox, arguments: ["--config", config.path])
            // WirePlumber may still put its own choice back after the pick above (under load it
            // sometimes does, before Earshot connects): then pick the DAC again, as a user would.
            if try await DaemonSession(path: daemon.socketPath).settledDefault() != Self.dac {
                #expect(try sandbox.run(["wpctl", "set-default", String(dacID)]).status == 0)
            }
            let graph = try await daemon.waitForRoute(to: Self.dac, streams: [])
            let speakers = try #require(graph.node(named: D.speakers))

            // The user picks the speakers: followed, and remembered as their last choice.
            let events = try EventSubscription(socket: daemon.socketPath)
            #expect(try sandbox.run(["wpctl", "set-default", String(speakers.id)]).status == 0)
            let followed: JSONValue
            do {
                followed = try await events.next("route-change")
            } catch {
                throw FixtureError("(the pick) \(error)\n\(daemon.process.logTail(lines: 200))")
            }
            #expect(followed["current"] == .string(D.speakers))
            #expect(followed["reason"] == .string("user-override"))

            // A sink arrives (not of a personal class): the override ends, and the rule's
            // priority ranks above the last choice.
            try await sandbox.createSink(VirtualSink(name: "alsa_output.sandbox.hdmi-stereo", description: "Sandbox HDMI", formFactor: "internal", bus: "pci"))
            let moved: JSONValue
            do {
                moved = try await events.next("route-change")
            } catch {
                throw FixtureError("\(error)\n\(daemon.process.logTail(lines: 200))")
            }
            #expect(moved["current"] == .string(Self.dac), "\(moved)")
            try await daemon.waitForRoute(to: Self.dac, streams: [])
            let status = try JSONValue.parse(try daemon.earshot("status", "--json", "--explain").output)
            #expect(status["decision"]?["default"] == .string(Self.dac))
            #expect(status["decision"]?["decided-by"]?["tier"] == .string("rule-priority"), "\(status["decision"] ?? .null)")
        }
    }
}
