import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// JSON Lines framing and protocol errors: what a careless or hostile client gets.
@Suite("control framing", .timeLimit(.minutes(1)), .blockingCalls)
struct ControlFramingTests {
    @Test("two requests in one write and one request split over writes: replies in order")
    func framing() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            try await client.send("{\"id\":1,\"op\":\"status\"}\n{\"id\":2,\"op\":\"list\"}\n")
            #expect(try await client.readJSON()["id"] == .integer(1))
            #expect(try await client.readJSON()["id"] == .integer(2))
            try await client.send("{\"id\":3,\"op\"")
            try await client.send(":\"list\"}\r\n\n   \n")
            let third = try await client.readJSON()
            #expect(third["id"] == .integer(3))
            #expect(third["ok"] == .bool(true))
        }
    }

    @Test("unknown op: invalid-request naming the operations; the connection stays usable")
    func unknownOperation() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let reply = try await client.request(#"{"id":1,"op":"reboot"}"#)
            #expect(reply["id"] == .integer(1))
            #expect(reply["ok"] == .bool(false))
            #expect(reply["error"]?["code"] == .string("invalid-request"))
            let message = reply["error"]?["message"]?.propertyText ?? ""
            #expect(message.contains("unknown op \"reboot\""))
            #expect(message.contains("\"subscribe\""))
            let missing = try await client.request(#"{"id":2}"#)
            #expect(missing["error"]?["message"]?.propertyText?.contains("missing \"op\"") == true)
            #expect(try await client.request(#"{"id":3,"op":"list"}"#)["ok"] == .bool(true))
        }
    }

    @Test("garbage, then a good request on the same connection")
    func garbageThenGood() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let garbage = try await client.request("{\"op\": status")
            #expect(garbage["ok"] == .bool(false))
            #expect(garbage["id"] == .null)
            #expect(garbage["error"]?["code"] == .string("invalid-request"))
            #expect(garbage["error"]?["message"]?.propertyText?.contains("malformed JSON") == true)
            try await client.send([0xFF, 0xFE, 0x00, 0x0A])
            #expect(try await client.readJSON()["ok"] == .bool(false))
            let array = try await client.request("[1,2,3]")
            #expect(array["error"]?["message"]?.propertyText?.contains("a request is a JSON object") == true)
            let good = try await client.request(#"{"id":42,"op":"status"}"#)
            #expect(good["id"] == .integer(42))
            #expect(good["ok"] == .bool(true))
        }
    }

    @Test("a line over 64 KiB: an error, then a disconnect; other clients unaffected")
    func oversizeLine() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            // No newline at all: the server must not wait for one.
            try await client.send(#"{"op":"status","pad":""# + String(repeating: "x", count: 70_000))
            let reply = try await client.readJSON()
            #expect(reply["ok"] == .bool(false))
            #expect(reply["error"]?["code"] == .string("invalid-request"))
            #expect(reply["error"]?["message"]?.propertyText?.contains("longer than 65536 bytes") == true)
            try await client.waitForClose()

            let other = try RawControlSocket(path: fixture.socketPath)
            #expect(try await other.request(#"{"op":"status"}"#)["ok"] == .bool(true))
        }
    }

    @Test("a line just under the limit is read, and refused for what it says")
    func lineAtLimit() async throws {
        try await ControlFixture.with(limits: ControlLimits(maximumLineBytes: 1024)) { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let head = #"{"op":"list","pad":""#
            let line = head + String(repeating: "x", count: 1024 - head.count - 2) + "\"}"
            #expect(line.utf8.count == 1024)
            let reply = try await client.request(line)
            #expect(reply["error"]?["message"]?.propertyText?.contains("unknown field \"pad\"") == true)
            #expect(try await client.request(#"{"op":"list"}"#)["ok"] == .bool(true))
        }
    }

    @Test("a half message at EOF is dropped; what came before is answered, then the server closes")
    func halfMessage() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            try await client.send("{\"id\":1,\"op\":\"status\"}\n{\"id\":2,\"op\":\"sta")
            client.shutdownWrite()
            let reply = try await client.readJSON()
            #expect(reply["id"] == .integer(1))
            #expect(try await client.readLine() == nil)
        }
    }
}
