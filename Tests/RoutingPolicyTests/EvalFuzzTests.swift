import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

/// Issue 12 item 2: `earshot eval` over any script either runs or refuses a line (exit 2); it
/// never traps. Seeded scripts of random times (near 0, near the limit, near Int64.max),
/// orders, sizes and actions, each run to the end; a trap would end this test process.
struct EvalFuzzTests {
    static let address = "AA:BB:CC:DD:EE:FF"
    static let nodes = [Sinks.speakers, Sinks.hdmi, Sinks.dac, Sinks.headphones, "alsa_output.gone"]

    static func time(_ random: inout SplitMix64, after last: Int) -> Int {
        switch random.next(below: 6) {
        case 0: return min(last, Int.max - 1000) + random.next(below: 1000)
        case 1: return Int.max - random.next(below: 100_000)
        case 2: return Int(EvalScript.maxAt) - random.next(below: 100_000)
        case 3: return Int(EvalScript.maxAt) + random.next(below: 100_000)
        case 4: return max(0, last - random.next(below: 10))
        default: return Int(truncatingIfNeeded: random.next() >> UInt64(random.next(below: 64)))
        }
    }

    static func line(_ random: inout SplitMix64, at: Int) -> String {
        let placement = ["on-head", "off-head", "in-ear", "unknown", "on-head"][random.next(below: 5)]
        let node = nodes[random.next(below: nodes.count)]
        return switch random.next(below: 7) {
        case 0: #"{"at":\#(at),"register":{"accessory":"\#(address)","reporter":"org.example.r","capabilities":["audio-switching","placement"],"placement":"\#(placement)"}}"#
        case 1, 2: #"{"at":\#(at),"update":{"accessory":"\#(address)","placement":"\#(placement)"}}"#
        case 3: #"{"at":\#(at),"unregister":{"accessory":"\#(address)"}}"#
        case 4: #"{"at":\#(at),"select":{"node":"\#(node)"}}"#
        case 5: #"{"at":\#(at),"remove":{"node":"\#(node)"}}"#
        default: #"{"at":\#(at),"add":{"id":\#(100 + random.next(below: 5)),"type":"PipeWire:Interface:Node","info":{"props":{"node.name":"alsa_output.new\#(random.next(below: 3))","media.class":"Audio/Sink"}}}}"#
        }
    }

    @Test(arguments: 0..<8)
    func noScriptTraps(_ batch: Int) throws {
        var random = SplitMix64(seed: 0xEA25_0000 + UInt64(batch))
        let graph = Sinks.graph(Sinks.all)
        var outcomes = (ran: 0, refused: 0)
        for _ in 0..<40 {
            var config = PolicyConfig()
            config.onDelay = Milliseconds(random.next(below: 60_001))
            config.offGrace = Milliseconds(random.next(below: 60_001))
            var last = 0
            var lines: [String] = []
            for _ in 0..<(1 + random.next(below: 40)) {
                last = Self.time(&random, after: last)
                lines.append(Self.line(&random, at: last))
            }
            do {
                let events = try EvalScript.parse(lines.joined(separator: "\n"), source: "fuzz.jsonl")
                var decisions = 0
                try EvalRunner.run(graph: graph, config: config, hostAddresses: [], events: events, source: "fuzz.jsonl") { _, _ in decisions += 1 }
                #expect(decisions > events.count)
                outcomes.ran += 1
            } catch {
                #expect(error.line >= 1 && error.line <= lines.count)
                outcomes.refused += 1
            }
        }
        // Both kinds happen: the generator reaches the limit and stays inside it.
        #expect(outcomes.ran + outcomes.refused == 40)
    }
}
