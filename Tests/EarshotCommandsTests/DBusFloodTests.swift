import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 21: one D-Bus client sending thousands of Updates without waiting must not hold up the
/// others' reads, and the output must follow the newest placement, not crawl through a backlog.
@Suite("D-Bus flood", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct DBusFloodTests {
    typealias D = DaemonFixture

    /// python3-dbus (a test dependency already, for the BlueZ stand-in): N Updates sent without
    /// waiting for replies, alternating placements and ending off-head, then a property read;
    /// prints the read's latency and when every Update was answered.
    static let script = #"""
    import sys, time, dbus
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    n = int(sys.argv[1]); address = sys.argv[2]
    bus = dbus.SessionBus()
    proxy = bus.get_object("org.earshot.Earshot1", "/org/earshot/Earshot1")
    earshot = dbus.Interface(proxy, "org.earshot.Earshot1")
    properties = dbus.Interface(proxy, "org.freedesktop.DBus.Properties")
    loop = GLib.MainLoop()
    state = {"answered": 0, "failed": 0, "start": time.monotonic(), "read": None}
    def done(*_):
        state["answered"] += 1
        if state["answered"] + state["failed"] == n: state["updates"] = time.monotonic() - state["start"]; finish()
    def failed(error):
        state["failed"] += 1
        if state["answered"] + state["failed"] == n: state["updates"] = time.monotonic() - state["start"]; finish()
    def finish():
        if state["read"] is not None and "updates" in state: loop.quit()
    for i in range(n):
        placement = "off-head" if i == n - 1 or i % 2 else "on-head"
        earshot.Update(address, "org.example.flood", {"placement": placement}, reply_handler=done, error_handler=failed)
    sent = time.monotonic()
    def read_done(value):
        state["read"] = time.monotonic() - sent
        finish()
    properties.Get("org.earshot.Earshot1", "Mode", reply_handler=read_done, error_handler=lambda e: (print("read failed", e), loop.quit()))
    GLib.timeout_add_seconds(90, loop.quit)
    loop.run()
    print("read %.3f updates %.3f answered %d failed %d" % (state["read"] or -1, state.get("updates", -1), state["answered"], state["failed"]))
    """#

    @Test("5000 Updates queued by one client: every one is answered, so is a property read sent after them, and the output ends on the newest placement", arguments: [5000])
    func flood(count: Int) async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let daemon = try D.start(in: sandbox)
            let call = ["busctl", "--user", "call", "org.earshot.Earshot1", "/org/earshot/Earshot1", "org.earshot.Earshot1"]
            let registered = try sandbox.run(call + [
                "Register", "ssasa{sv}", D.address, "org.example.flood", "2", "audio-switching", "placement", "1", "placement", "s", "on-head",
            ])
            #expect(registered.status == 0, "\(registered.output)")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            let script = sandbox.root.appendingPathComponent("flood.py").path
            try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try sandbox.run(["/usr/bin/python3", script, String(count), D.address], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let words = result.output.split(whereSeparator: \.isWhitespace)
            let read = words.firstIndex(of: "read").flatMap { Double(words[$0 + 1]) } ?? -1
            let answered = words.firstIndex(of: "answered").flatMap { Int(words[$0 + 1]) } ?? -1
            // The read is answered (before issue 21 it came 25 s behind 5000 Updates). That it
            // does not queue behind them is checked by order, with a change held in the daemon
            // (DBusReadOrderTests); a bound in seconds here failed on a loaded run (issue 28).
            #expect(read >= 0, "\(result.output)")
            #expect(answered == count, "\(result.output)")
            // The newest placement (off-head) holds once the grace has run.
            _ = try await sandbox.observer.waitUntil("the speakers after the flood", timeout: .seconds(10)) { $0.isDefault(D.speakers) }
        }
    }
}
