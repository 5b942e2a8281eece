import Foundation
import PipeWireTestSupport
import SystemBridge
import TestScheduling
import Testing

/// The sd-bus binding against a real private dbus-daemon, with gdbus as an outside client.
@Suite("D-Bus connection", .blockingCalls)
struct DBusConnectionTests {
    @Test("a value of every type survives a round trip through a real bus")
    func roundTrip() async throws {
        try await withPrivateBus { bus, _ in
            let server = try DBusConnection(.address(bus.address))
            let client = try DBusConnection(.address(bus.address))
            defer { client.close(); server.close() }
            try await server.requestName("org.earshot.Test")
            try await server.exportObject(path: "/org/earshot/Test") { call in
                call.reply(call.arguments)
            }
            let values: [DBusValue] = [
                .byte(7), .boolean(true), .int16(-3), .uint16(4), .int32(-5), .uint32(6), .int64(-7), .uint64(8), .double(0.5),
                .string("héllo"), .objectPath("/a/b"), .signature("a{sv}"),
                .strings([]), .properties(["x": .int32(1), "y": .strings(["a", "b"])]),
                .structure([.string("s"), .array(element: "(si)", [.structure([.string("k"), .int32(2)])])]),
            ]
            let echoed = try await client.call(
                destination: "org.earshot.Test", path: "/org/earshot/Test", interface: "org.earshot.Test", member: "Echo", values)
            #expect(echoed == values)
        }
    }

    @Test("errors come back as D-Bus error names; a taken name is refused; gdbus sees signals and calls methods")
    func errorsSignalsAndOutsideClients() async throws {
        try await withPrivateBus { bus, directory in
            let server = try DBusConnection(.address(bus.address))
            let second = try DBusConnection(.address(bus.address))
            defer { second.close(); server.close() }
            try await server.requestName("org.earshot.Test")
            await #expect(throws: DBusError.nameTaken("org.earshot.Test")) { try await second.requestName("org.earshot.Test") }
            try await server.exportObject(path: "/org/earshot/Test") { call in
                if call.member == "Fail" { call.reply.fail(name: "org.earshot.Test.Error.Nope", message: "no, because") }
                else { call.reply([.string("\(call.member):\(call.signature)")]) }
            }
            await #expect(throws: DBusError.remote(name: "org.earshot.Test.Error.Nope", message: "no, because")) {
                _ = try await second.call(destination: "org.earshot.Test", path: "/org/earshot/Test", interface: "org.earshot.Test", member: "Fail")
            }
            // A real outside client.
            let gdbus = try Shell.run(
                ["gdbus", "call", "--address", bus.address, "--dest", "org.earshot.Test", "--object-path", "/org/earshot/Test",
                 "--method", "org.earshot.Test.Hello", "x", "1"], environment: ProcessInfo.processInfo.environment).standardOutput
            #expect(gdbus.contains("'Hello:si'"), "\(gdbus)")
            // Signals, matched by rule.
            let (signals, continuation) = AsyncStream.makeStream(of: DBusSignal.self)
            try await second.addMatch("type='signal',interface='org.earshot.Test',member='Ping'") { continuation.yield($0) }
            server.emitSignal(path: "/org/earshot/Test", interface: "org.earshot.Test", member: "Ping", [.string("one"), .uint32(2)])
            var iterator = signals.makeAsyncIterator()
            let signal = try #require(await iterator.next())
            #expect(signal.arguments == [.string("one"), .uint32(2)])
            #expect(signal.member == "Ping" && signal.path == "/org/earshot/Test")
        }
    }

    @Test("a call to a peer that vanished fails; closing with a call in flight fails it instead of hanging")
    func failures() async throws {
        try await withPrivateBus { bus, _ in
            let client = try DBusConnection(.address(bus.address))
            defer { client.close() }
            await #expect(throws: DBusError.self) {
                _ = try await client.call(destination: "org.earshot.Nobody", path: "/", interface: "org.earshot.Test", member: "X")
            }
            let silent = try DBusConnection(.address(bus.address))
            try await silent.requestName("org.earshot.Silent")
            let (arrived, arrival) = AsyncStream.makeStream(of: DBusReply.self)
            try await silent.exportObject(path: "/s") { call in arrival.yield(call.reply) }
            let answer = Task {
                try await client.call(destination: "org.earshot.Silent", path: "/s", interface: "org.earshot.Test", member: "Wait", timeout: .seconds(60))
            }
            var replies = arrived.makeAsyncIterator()
            _ = try #require(await replies.next())
            // The server goes away with the call unanswered: the caller gets an error, not a hang.
            silent.close()
            await #expect(throws: DBusError.self) { _ = try await answer.value }
            // After close, every request fails at once instead of waiting on a thread that is gone.
            await #expect(throws: DBusError.disconnected) {
                _ = try await silent.call(destination: "org.earshot.Nobody", path: "/", interface: "org.earshot.Test", member: "X")
            }
            await #expect(throws: DBusError.disconnected) { try await silent.requestName("org.earshot.Late") }
        }
    }
}

func withPrivateBus(_ body: (PrivateBus, URL) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-dbus-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = directory.path
    environment["XDG_STATE_HOME"] = directory.path
    environment["XDG_CONFIG_HOME"] = directory.path
    let bus = try PrivateBus(
        name: "dbus-daemon", socket: directory.appendingPathComponent("bus").path, environment: environment,
        logFile: directory.appendingPathComponent("dbus.log"))
    defer { bus.stop() }
    try await body(bus, directory)
}
