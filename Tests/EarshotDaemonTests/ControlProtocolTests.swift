import ControlProtocol
import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import TestScheduling
import Testing

/// The operations over a real socket, answered by an in-memory daemon.
@Suite("control protocol", .timeLimit(.minutes(1)), .blockingCalls)
struct ControlProtocolTests {
    @Test("register, current, update, list, unregister: ok replies echo the id and carry the accessory")
    func accessoryRoundTrip() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let registered = try await client.request(
                #"{"id":1,"op":"register","accessory":"aa:bb:cc:dd:ee:ff","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"off-head"}"#)
            #expect(registered["id"] == .integer(1))
            #expect(registered["ok"] == .bool(true))
            #expect(registered["accessory"]?["accessory"] == .string("AA:BB:CC:DD:EE:FF"))
            #expect(registered["accessory"]?["capabilities"] == .array([.string("audio-switching"), .string("placement")]))
            #expect(registered["accessory"]?["placement"] == .string("off-head"))
            #expect(registered["accessory"]?["primary-source"] == .null)

            let updated = try await client.request(#"{"id":"u","op":"update","accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}"#)
            #expect(updated["id"] == .string("u"))
            #expect(updated["accessory"]?["placement"] == .string("on-head"))

            let current = try await client.request(#"{"op":"current","accessory":"AA:BB:CC:DD:EE:FF"}"#)
            #expect(current["id"] == .null)
            #expect(current["accessory"]?["placement"] == .string("on-head"))

            let list = try await client.request(#"{"id":3,"op":"list"}"#)
            guard case .array(let accessories)? = list["accessories"] else { throw Failure("no accessories in \(list.canonicalText)") }
            #expect(accessories.count == 1)
            #expect(accessories.first?["reporter"] == .string("org.example.r"))
            #expect(accessories.first?["stale"] == .bool(false))

            let unregistered = try await client.request(#"{"id":4,"op":"unregister","accessory":"AA:BB:CC:DD:EE:FF"}"#)
            #expect(unregistered["ok"] == .bool(true))
            #expect(unregistered["accessory"] == .null)
        }
    }

    @Test("update and unregister name their reporter: the connection's registered one, else the reporter field, else refused")
    func requestsNameTheirReporter() async throws {
        try await ControlFixture.with { fixture in
            let owner = try RawControlSocket(path: fixture.socketPath)
            _ = try await owner.request(
                #"{"id":1,"op":"register","accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.owner","capabilities":["placement"],"placement":"off-head"}"#)
            _ = try await owner.request(#"{"id":2,"op":"update","accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}"#)
            let other = try RawControlSocket(path: fixture.socketPath)
            let anonymous = try await other.request(#"{"id":3,"op":"update","accessory":"AA:BB:CC:DD:EE:FF","placement":"off-head"}"#)
            #expect(anonymous["error"]?["code"] == .string("invalid-request"))
            #expect(anonymous["error"]?["message"]?.propertyText?.contains("update needs a reporter") == true, "\(anonymous.canonicalText)")
            let anonymousEnd = try await other.request(#"{"id":4,"op":"unregister","accessory":"AA:BB:CC:DD:EE:FF"}"#)
            #expect(anonymousEnd["error"]?["message"]?.propertyText?.contains("unregister needs a reporter") == true)
            _ = try await other.request(#"{"id":5,"op":"unregister","accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.other"}"#)
            let badName = try await other.request(#"{"id":6,"op":"unregister","accessory":"AA:BB:CC:DD:EE:FF","reporter":"nodots"}"#)
            #expect(badName["error"]?["message"]?.propertyText?.contains("malformed reporter") == true)
            let address = AccessoryIdentity(parsing: "AA:BB:CC:DD:EE:FF")!
            let performed = await fixture.control.performed.filter { $0.verb != "register" }
            #expect(performed == [
                .update(address, AccessoryUpdate(placement: .set(.onHead)), reporter: "org.example.owner"),
                .unregister(address, reporter: "org.example.other"),
            ])
        }
    }

    @Test("a refusal carries the daemon's code and message")
    func refusal() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let reply = try await client.request(#"{"id":7,"op":"update","accessory":"11:22:33:44:55:66","reporter":"org.example.r","placement":"on-head"}"#)
            #expect(reply["id"] == .integer(7))
            #expect(reply["ok"] == .bool(false))
            #expect(reply["error"]?["code"] == .string("unknown"))
            #expect(reply["error"]?["message"]?.propertyText?.contains("register it") == true)
        }
    }

    @Test("field mistakes are invalid-request replies naming the field, from AccessoryRequestDecoder")
    func fieldMistakes() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let badAddress = try await client.request(#"{"id":1,"op":"current","accessory":"AA:BB"}"#)
            #expect(badAddress["error"]?["code"] == .string("invalid-request"))
            #expect(badAddress["error"]?["message"]?.propertyText?.contains("malformed accessory") == true)
            let extra = try await client.request(#"{"id":2,"op":"status","verbose":true}"#)
            #expect(extra["error"]?["message"]?.propertyText?.contains("\"verbose\"") == true)
            let noCapabilities = try await client.request(#"{"id":3,"op":"register","accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r"}"#)
            #expect(noCapabilities["error"]?["message"]?.propertyText?.contains("capabilities") == true)
        }
    }

    @Test("status: mode, remote and the decision (null before the first)")
    func status() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let reply = try await client.request(#"{"id":1,"op":"status"}"#)
            #expect(reply["ok"] == .bool(true))
            #expect(reply["status"]?["mode"] == .string("standalone"))
            #expect(reply["status"]?["remote"] == .string("pipewire-0"))
            #expect(reply["status"]?["connected"] == .bool(true))
            #expect(reply["status"]?["session-manager"] == .null)
            #expect(reply["status"]?["decision"] == .null)
        }
    }

    @Test("subscribe: the ok reply first, then route-change and accessory events in order; requests still answered")
    func subscribe() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            let ok = try await client.request(#"{"id":"s","op":"subscribe"}"#)
            #expect(ok["id"] == .string("s"))
            #expect(ok["subscribed"] == .bool(true))
            await fixture.control.emit(.route(.placementChanged, from: "speakers", to: "headphones"))
            await fixture.control.emit(.accessory(ControlWire.AccessoryEvent(
                at: 5, change: .updated, accessory: "AA:BB:CC:DD:EE:FF", reporter: "org.example.r",
                configuration: ControlWire.Configuration(AccessoryConfiguration(capabilities: [.placement], placement: .onHead)))))
            await fixture.control.emit(.route(.placementChanged, from: "headphones", to: nil))

            let first = try await client.readJSON()
            #expect(first["event"] == .string("route-change"))
            #expect(first["reason"] == .string("placement-changed"))
            #expect(first["previous"] == .string("speakers"))
            #expect(first["current"] == .string("headphones"))
            #expect(first["accessory"] == .string("AA:BB:CC:DD:EE:FF"))
            #expect(first["at"] == .integer(1_700_000_000_000))
            let second = try await client.readJSON()
            #expect(second["event"] == .string("accessory"))
            #expect(second["change"] == .string("updated"))
            #expect(second["configuration"]?["placement"] == .string("on-head"))
            let third = try await client.readJSON()
            #expect(third["current"] == .null)

            let status = try await client.request(#"{"id":9,"op":"status"}"#)
            #expect(status["id"] == .integer(9))
        }
    }

    @Test("the daemon ending its event stream closes the subscriber's connection")
    func subscriptionEnds() async throws {
        try await ControlFixture.with { fixture in
            let client = try RawControlSocket(path: fixture.socketPath)
            _ = try await client.request(#"{"op":"subscribe"}"#)
            await fixture.control.finishSubscriptions()
            try await client.waitForClose()
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
