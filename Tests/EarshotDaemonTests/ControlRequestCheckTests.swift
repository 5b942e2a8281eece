@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
import EarshotDaemon
import Foundation
import RoutingPolicy
import TestScheduling
import Testing

/// Issue 12 item 14: duplicate keys refused, ids echoed exactly as sent, the nesting limit named.
@Suite("control request details", .blockingCalls)
struct ControlRequestCheckTests {
    static func refusal(_ line: String) -> ControlRequestFailure? {
        if case .failure(let failure) = ControlWire.request(from: Data(line.utf8)) { return failure }
        return nil
    }

    @Test("a key given twice is refused, at any depth and however it is escaped; the id is echoed unless it is the duplicate")
    func duplicateKeys() throws {
        let op = try #require(Self.refusal(#"{"id":1,"op":"status","op":"list"}"#))
        #expect(op.id == .integer(1))
        #expect(op.error.code == .invalidRequest)
        #expect(op.error.message.hasPrefix(#"duplicate key "op""#), "\(op.error.message)")
        let id = try #require(Self.refusal(#"{"id":1,"id":2,"op":"status"}"#))
        #expect(id.id == nil)
        #expect(id.error.message.hasPrefix(#"duplicate key "id""#))
        let escaped = try #require(Self.refusal(#"{"id":3,"op":"status","o\u0070":"list"}"#))
        #expect(escaped.error.message.hasPrefix(#"duplicate key "op""#))
        let nested = try #require(Self.refusal(
            #"{"id":4,"op":"register","accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":[],"placement":{"a":1,"a":2}}"#))
        #expect(nested.error.message.hasPrefix(#"duplicate key "a""#))
        let accessory = try #require(Self.refusal(
            #"{"id":5,"op":"update","accessory":"AA:BB:CC:DD:EE:FF","accessory":"11:22:33:44:55:66","placement":"on-head"}"#))
        #expect(accessory.error.message.hasPrefix(#"duplicate key "accessory""#))
    }

    @Test("an id is echoed exactly as sent; an integer outside 64 bits, or a number that would read back otherwise, is refused")
    func ids() throws {
        for sent in ["9223372036854775807", "-9223372036854775808", "0", "1.5", "-2.25", "\"x\"", "[1,\"a\",{\"b\":2}]", "null", "true"] {
            let line = #"{"id":\#(sent),"op":"status"}"#
            guard case .success(let request) = ControlWire.request(from: Data(line.utf8)) else {
                Issue.record("\(line) refused")
                continue
            }
            let reply = String(decoding: ControlWire.line(ControlWire.success(id: request.id, ControlWire.SubscribeResult())), as: UTF8.self)
            #expect(reply.hasPrefix(#"{"id":\#(sent),"#), "\(reply)")
        }
        for (sent, message) in [
            ("9223372036854775808", "id 9223372036854775808 is an integer outside 64 bits"),
            ("-9223372036854775809", "id -9223372036854775809 is an integer outside 64 bits"),
            ("123456789012345678901234567890", "is an integer outside 64 bits"),
            ("1.50", "id 1.50 could not be echoed as sent (it reads back as 1.5)"),
            ("1e3", "id 1e3 could not be echoed as sent (it reads back as 1000)"),
            ("[18446744073709551616]", "id 18446744073709551616 is an integer outside 64 bits"),
        ] {
            let refused = try #require(Self.refusal(#"{"id":\#(sent),"op":"status"}"#), "\(sent)")
            #expect(refused.id == nil)
            #expect(refused.error.code == .invalidRequest)
            #expect(refused.error.message.contains(message), "\(refused.error.message)")
        }
    }

    @Test("nesting beyond the limit is refused naming the limit, also beyond the decoder's own", arguments: [33, 100, 600])
    func depth(_ levels: Int) throws {
        let line = #"{"id":1,"op":"status","x":"# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}"
        let refused = try #require(Self.refusal(line))
        #expect(refused.error.message.hasPrefix("nesting deeper than 32 levels (the nesting-depth limit"), "\(refused.error.message)")
    }

    @Test("within the limit, and plain syntax errors, are as before")
    func asBefore() throws {
        let within = #"{"id":1,"op":"register","accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.example.r","capabilities":[],"placement":"# + String(repeating: "[", count: 30) + String(repeating: "]", count: 30) + "}"
        let refused = try #require(Self.refusal(within))
        #expect(refused.error.message.hasPrefix("unknown placement"), "\(refused.error.message)")
        let malformed = try #require(Self.refusal(#"{"id":1,"op":"status""#))
        #expect(malformed.error.message.hasPrefix("malformed JSON"), "\(malformed.error.message)")
    }
}
