import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// `earshot daemon`'s D-Bus service (org.earshot.Earshot1) on a sandbox's private session bus,
/// driven by real clients: busctl, gdbus, dbus-send, the Python example and a DBusConnection.
@Suite("D-Bus service end to end", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct DBusServiceTests {
    typealias D = DaemonFixture
    static let sinks: [VirtualSink] = [.speakers(), .headphones()]
    static let call = ["busctl", "--user", "call", "org.earshot.Earshot1", "/org/earshot/Earshot1", "org.earshot.Earshot1"]

    @Test("busctl registers and updates: on-head moves the default output; AccessoryChanged and RouteChanged are signalled")
    func busctlMovesTheOutput() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: Self.sinks)) { sandbox in
            let daemon = try D.start(in: sandbox)
            let listener = try DBusConnection(.address(try #require(sandbox.environment["DBUS_SESSION_BUS_ADDRESS"])))
            defer { listener.close() }
            let (signals, arrived) = AsyncStream.makeStream(of: DBusSignal.self)
            try await listener.addMatch("type='signal',sender='org.earshot.Earshot1',interface='org.earshot.Earshot1'") { arrived.yield($0) }

            let registered = try sandbox.run(Self.call + [
                "Register", "ssasa{sv}", D.address, "org.example.busctl", "2", "audio-switching", "placement", "1", "placement", "s", "off-head",
            ])
            #expect(registered.status == 0, "\(registered.output)")
            #expect(registered.output.contains(#""placement" s "off-head""#), "\(registered.output)")
            try await daemon.waitForRoute(to: D.speakers, streams: [])

            let updated = try sandbox.run(Self.call + ["Update", "ssa{sv}", D.address, "org.example.busctl", "1", "placement", "s", "on-head"])
            #expect(updated.status == 0, "\(updated.output)")
            #expect(updated.output.contains(#""placement" s "on-head""#), "\(updated.output)")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            let cleared = try sandbox.run(Self.call + ["Update", "ssa{sv}", D.address, "org.example.busctl", "1", "primary-source", "s", ""])
            #expect(cleared.status == 0 && cleared.output.contains(#""primary-source" s """#), "\(cleared.output)")

            // Register off-head moved the output off the headphones (the initial pick), on-head back.
            let seen = try await signals.collect(timeout: .seconds(10)) { $0.member == "RouteChanged" && $0.arguments[2] == .string(D.headphones) && $0.arguments[0] == .string("placement-changed") }
            let accessoryChanges = seen.filter { $0.member == "AccessoryChanged" }
            #expect(accessoryChanges.map { $0.arguments[0] } == [.string("registered"), .string("updated")])
            #expect(accessoryChanges.allSatisfy { $0.arguments[1] == .string(D.address) && $0.arguments[2] == .string("org.example.busctl") })
            #expect(accessoryChanges.last?.arguments[3].dictionary?["placement"] == .string("on-head"))
            let route = try #require(seen.last)
            #expect(Array(route.arguments.prefix(4)) == [.string("placement-changed"), .string(D.speakers), .string(D.headphones), .string(D.address)])
            #expect(route.arguments.count == 6 && route.arguments[5].integer ?? 0 > 1_700_000_000_000)
        }
    }

    @Test("errors come back as D-Bus error names with the daemon's messages; introspection serves dbus/org.earshot.Earshot1.xml; a second daemon is refused")
    func errorsIntrospectionAndSecondDaemon() async throws {
        try await withSandbox(.init(sessionBus: true)) { sandbox in
            let daemon = try D.start(in: sandbox)
            let gdbus = { (method: String, arguments: [String]) throws -> String in
                // gdbus prints errors on stderr: both, in one text.
                try sandbox.run(["sh", "-c", #""$@" 2>&1"#, "sh", "gdbus", "call", "--session", "--dest", "org.earshot.Earshot1", "--object-path", "/org/earshot/Earshot1", "--method", method] + arguments).output
            }
            let error = "GDBus.Error:org.earshot.Earshot1.Error."
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address, "org.example.gdbus", "{'placement': <'on-head'>}"])
                .contains("\(error)Unknown: no registration for \(D.address)"))
            #expect(try gdbus("org.earshot.Earshot1.Register", [D.address, "org.example.gdbus", "['placement']", "{'placement': <'sideways'>}"])
                .contains("\(error)InvalidRequest: unknown placement \"sideways\""))
            let registered = try gdbus("org.earshot.Earshot1.Register", [D.address, "org.example.gdbus", "['placement']", "{'placement': <'off-head'>}"])
            #expect(registered.contains("'placement': <'off-head'>") && registered.contains("'primary-source': <''>"), "\(registered)")
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address, "org.example.gdbus", "{'primary-source': <'11:22:33:44:55:66'>}"])
                .contains("\(error)AccessoryNotCapable:"))
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address, "org.example.gdbus", "{'primary-source': <'zz'>}"])
                .contains(#"or "" to clear it"#))
            #expect(try gdbus("org.earshot.Earshot1.Register", [D.address, "org.example.other", "['placement']", "{}"])
                .contains("\(error)InvalidRequest:"))
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address, "org.example.other", "{'placement': <'on-head'>}"])
                .contains("\(error)InvalidRequest: \(D.address) is registered by org.example.gdbus, not org.example.other"))
            #expect(try gdbus("org.earshot.Earshot1.Unregister", [D.address, "org.example.other"])
                .contains("\(error)InvalidRequest: \(D.address) is registered by org.example.gdbus"))
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address]).contains("GDBus.Error:org.freedesktop.DBus.Error.InvalidArgs: Update takes (s accessory, s reporter, a{sv} changes), not (s)"))
            #expect(try gdbus("org.earshot.Earshot1.Frobnicate", []).contains("GDBus.Error:org.freedesktop.DBus.Error.UnknownMethod"))
            #expect(try gdbus("org.earshot.Earshot1.Unregister", [D.address, "org.example.gdbus"]).contains("()"))
            #expect(try gdbus("org.earshot.Earshot1.Update", [D.address, "org.example.gdbus", "{'placement': <'on-head'>}"]).contains("\(error)Invalidated:"))

            // dbus-send: the methods without a{sv} arguments.
            let current = try sandbox.run(["sh", "-c", "dbus-send --session --print-reply --dest=org.earshot.Earshot1 /org/earshot/Earshot1 org.earshot.Earshot1.Current string:\(D.address) 2>&1"])
            #expect(current.output.contains("Error org.earshot.Earshot1.Error.Invalidated"), "\(current.output)")
            let list = try sandbox.run(["dbus-send", "--session", "--print-reply", "--dest=org.earshot.Earshot1", "/org/earshot/Earshot1", "org.earshot.Earshot1.List"])
            #expect(list.status == 0 && list.output.contains("array ["), "\(list.output)")

            // The served XML is the repository's file, byte for byte; busctl reads it.
            let bus = try DBusConnection(.address(try #require(sandbox.environment["DBUS_SESSION_BUS_ADDRESS"])))
            defer { bus.close() }
            let served = try await bus.call(destination: "org.earshot.Earshot1", path: "/org/earshot/Earshot1", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            let file = try String(contentsOf: EarshotBinary.repository.appendingPathComponent("dbus/org.earshot.Earshot1.xml"), encoding: .utf8)
            #expect(served == [.string(file)])
            let introspected = try sandbox.run(["busctl", "--user", "introspect", "org.earshot.Earshot1", "/org/earshot/Earshot1"]).output
            for row in [".Register", ".Update", ".Current", ".Unregister", ".List", ".Status", ".RouteChanged", ".AccessoryChanged", ".PlaybackChanged"] {
                #expect(introspected.contains(row), "\(row) missing from:\n\(introspected)")
            }
            #expect(introspected.contains("ssasa{sv}"))

            // Status carries what `earshot status --explain` prints.
            let status = try await bus.call(destination: "org.earshot.Earshot1", path: "/org/earshot/Earshot1", interface: "org.earshot.Earshot1", member: "Status")
            let fields = try #require(status.first?.dictionary)
            let explained = try daemon.earshot("status", "--explain").output
            #expect(fields["explanation"]?.string.map { $0 + "\n" } == explained)
            #expect(fields["mode"] == .string("standalone"))

            // A second daemon on the same PipeWire is refused by the instance lock, whatever its
            // control socket; one for another PipeWire still meets the D-Bus name.
            let second = try sandbox.spawn("earshot-daemon-2", [daemon.binary, "daemon", "--socket", sandbox.runtimeDir.appendingPathComponent("other").path])
            #expect(second.waitForExit(timeout: .seconds(20)) == 1)
            #expect(second.logTail().contains("another earshot daemon already routes this PipeWire"))
            let third = try sandbox.spawn("earshot-daemon-3", [
                daemon.binary, "daemon", "--socket", sandbox.runtimeDir.appendingPathComponent("third").path,
                "--remote", sandbox.runtimeDir.appendingPathComponent("pipewire-9").path,
            ])
            #expect(third.waitForExit(timeout: .seconds(20)) == 1)
            #expect(third.logTail().contains("the D-Bus name org.earshot.Earshot1 is owned by another process"))
            #expect(try gdbus("org.earshot.Earshot1.List", []).contains("(@aa{sv} [],)"))
        }
    }

    @Test("the Python reporter example (examples/dbus-reporter.py) moves the output and reports a bad line")
    func pythonExample() async throws {
        try await withSandbox(.init(sinks: Self.sinks, sessionBus: true)) { sandbox in
            let daemon = try D.start(in: sandbox)
            let (readEnd, writeEnd) = ChildProcess.makePipe()
            let script = EarshotBinary.repository.appendingPathComponent("examples/dbus-reporter.py").path
            // Debian's python3-dbus is for the system Python, whatever python3 comes first in PATH.
            let reporter = try sandbox.spawn("dbus-reporter", ["/usr/bin/python3", script, D.address], stdinFD: readEnd)
            close(readEnd)
            var input: Int32? = writeEnd
            defer { if let input { close(input) } }
            let send = { (line: String) in _ = line.withCString { write(writeEnd, $0, strlen($0)) } }
            send("on-head\n")
            try await daemon.waitForRoute(to: D.headphones, streams: [])
            send("sideways\noff-head\n")
            close(writeEnd)
            input = nil
            try await daemon.waitForRoute(to: D.speakers, streams: [])
            #expect(reporter.waitForExit(timeout: .seconds(20)) == 0, "\(reporter.logTail())")
            let log = reporter.logTail()
            #expect(log.contains("on-head\n") && log.contains("off-head\n"), "\(log)")
            #expect(log.contains("sideways: unknown placement \"sideways\""), "\(log)")
        }
    }
}
