import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// The scripted demo `scripts/run` plays where no PipeWire runs (README's first command), played
/// for real: scripts/sandbox starts its own PipeWire, WirePlumber, session bus and mpv, and
/// scripts/demo drives the test build's `earshot` through a fake AirPods' wear cycle (a
/// stand-in BlueZ, the built-in AirPods driver, no reporter).
@Suite("scripts/demo", .timeLimit(.minutes(2)), .blockingCalls)
struct DemoScriptTests {
    @Test("the demo's AirPods move mpv to the headphones and back, pause it when they come out and resume it when they go back in")
    func demo() throws {
        guard let binary = EarshotBinary.url?.path else { throw CocoaError(.fileNoSuchFile) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-demo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: root) }
        var environment = ProcessInfo.processInfo.environment
        // The sandbox makes its own runtime dir; these keep anything else off the user's.
        environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        environment["XDG_RUNTIME_DIR"] = root.path
        let repository = EarshotBinary.repository
        let log = root.appendingPathComponent("demo.log")
        // ChildProcess, not Foundation's Process: the sandbox stops its daemons with SIGTERM,
        // which must not arrive blocked (Process passes on the test thread's signal mask).
        let sandbox = try ChildProcess(
            name: "scripts/sandbox",
            arguments: [repository.appendingPathComponent("scripts/sandbox").path, repository.appendingPathComponent("scripts/demo").path, binary],
            environment: environment, logFile: log)
        let status = sandbox.waitForExit(timeout: .seconds(180))
        if status == nil { sandbox.stop() }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(output)")
        let steps = output.components(separatedBy: "\n== ")
        // The real path: the stand-in BlueZ's AirPods, the built-in driver, no reporter.
        let found = try #require(steps.first { $0.hasPrefix("AirPods appear") })
        #expect(found.contains("accessory registered AA:BB:CC:DD:EE:FF  placement off-head"), "\(found)")
        let on = try #require(steps.first { $0.hasPrefix("both buds in") })
        #expect(on.contains("placement-changed  alsa_output.sandbox.analog-stereo -> bluez_output.AA_BB_CC_DD_EE_FF.1"), "\(on)")
        // The microphone follows the worn headset (docs/policy.md §8): the call's recorder too.
        #expect(on.contains("placement-changed  input alsa_input.sandbox.analog-stereo -> bluez_input.AA_BB_CC_DD_EE_FF.0"), "\(on)")
        #expect(on.contains("call                 ← bluez_input.AA_BB_CC_DD_EE_FF.0"), "\(on)")
        let oneOut = try #require(steps.first { $0.hasPrefix("one bud out") })
        #expect(oneOut.contains("driver: AA:BB:CC:DD:EE:FF aap (AirPods Pro) connected"), "\(oneOut)")
        let off = try #require(steps.first { $0.hasPrefix("both out") })
        #expect(off.contains("mpv (MPRIS): Paused"), "\(off)")
        #expect(off.contains("mpv                  → alsa_output.sandbox.analog-stereo"), "\(off)")
        #expect(off.contains("placement-changed  input bluez_input.AA_BB_CC_DD_EE_FF.0 -> alsa_input.sandbox.analog-stereo"), "\(off)")
        #expect(off.contains("call                 ← alsa_input.sandbox.analog-stereo"), "\(off)")
        let back = try #require(steps.first { $0.hasPrefix("back in") })
        #expect(back.contains("mpv (MPRIS): Playing"), "\(back)")
        #expect(back.contains("mpv                  → bluez_output.AA_BB_CC_DD_EE_FF.1"), "\(back)")
        // The battery the desktop would see: BlueZ's Battery1, the lower bud.
        let battery = try #require(steps.first { $0.hasPrefix("the buds report their batteries") })
        #expect(battery.contains("the desktop (stand-in BlueZ): battery /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF percentage 35"), "\(battery)")
        #expect(battery.contains("desktop battery shown (Earshot is BlueZ's battery provider)"), "\(battery)")
        let who = try #require(steps.first { $0.hasPrefix("who reports them") })
        #expect(who.contains("reporter: org.earshot.driver.aap"), "\(who)")
        #expect(who.contains("default source: bluez_input.AA_BB_CC_DD_EE_FF.0"), "\(who)")
        // A Sony set in their place, read over MDR (issue 30).
        let sony = try #require(steps.first { $0.hasPrefix("the AirPods go; a Sony") })
        #expect(sony.contains("accessory registered AA:BB:CC:DD:EE:FF  placement off-head"), "\(sony)")
        let sonyPutOn = try #require(steps.first { $0.hasPrefix("the Sony set put on") })
        #expect(sonyPutOn.contains("placement-changed  alsa_output.sandbox.analog-stereo -> bluez_output.AA_BB_CC_DD_EE_FF.1"), "\(sonyPutOn)")
        let sonyOff = try #require(steps.first { $0.hasPrefix("the Sony set taken off") })
        #expect(sonyOff.contains("mpv (MPRIS): Paused"), "\(sonyOff)")
        #expect(sonyOff.contains("mpv                  → alsa_output.sandbox.analog-stereo"), "\(sonyOff)")
        let sonyOn = try #require(steps.first { $0.hasPrefix("put back on") })
        #expect(sonyOn.contains("mpv (MPRIS): Playing"), "\(sonyOn)")
        #expect(sonyOn.contains("driver: AA:BB:CC:DD:EE:FF sony (WH-1000XM6) connected"), "\(sonyOn)")
        // Starting changed nothing: no input route at start (the session manager's microphone held).
        #expect(!output.contains("input route initial: bluez_input"), "\(output)")
        #expect(!output.contains("warning"), "\(output)")
    }
}
