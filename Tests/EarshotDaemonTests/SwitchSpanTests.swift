import WireFields
import AudioGraph
import ControlProtocol
import Foundation
import Logging
import Testing

@testable import EarshotDaemon

/// Earshot's own span of a switch (docs/performance.md, issue 28): a request's write of the
/// configured default paired with that write's echo, never another write's.
@Suite("Earshot's own span of a switch") struct SwitchSpanTests {
    static let key = Graph.configuredSinkKey

    static func writer() -> (DefaultSinkWriter, FakePipeWire) {
        (DefaultSinkWriter(logger: Logger(label: "test")), FakePipeWire(log: EffectLog()))
    }

    @Test("a request's write and its echo make one span: read ≤ sent ≤ echo")
    func requestWriteEcho() async {
        let (writer, pipewire) = Self.writer()
        writer.spans.requestRead = 5
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.spans.requestRead == nil)
        #expect(writer.spans.spans.isEmpty)
        #expect(writer.consumeEcho(of: "a", at: 0))
        let spans = writer.spans.spans
        #expect(spans.count == 1)
        #expect(spans.first?.read == 5)
        if let span = spans.first { #expect(span.read <= span.sent && span.sent <= span.echo) }
    }

    @Test("a write no request caused is not timed")
    func noRequest() async {
        let (writer, pipewire) = Self.writer()
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.consumeEcho(of: "a", at: 0))
        #expect(writer.spans.spans.isEmpty)
    }

    @Test("the same name written before the request's write: its echo does not end the span, the second does")
    func sameNameEarlier() async {
        let (writer, pipewire) = Self.writer()
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        await writer.write("b", keys: [Self.key], on: pipewire, flush: true)
        writer.spans.requestRead = 1
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.consumeEcho(of: "a", at: 0))
        #expect(writer.spans.spans.isEmpty)
        #expect(writer.consumeEcho(of: "b", at: 0))
        #expect(writer.spans.spans.isEmpty)
        #expect(writer.consumeEcho(of: "a", at: 0))
        #expect(writer.spans.spans.map(\.read) == [1])
    }

    @Test("the next request taken before the last write's echo: both switches are timed, each to its own echo")
    func nextRequestBeforeEcho() async {
        let (writer, pipewire) = Self.writer()
        writer.spans.requestRead = 1
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        writer.spans.requestRead = 2
        await writer.write("b", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.consumeEcho(of: "a", at: 0))
        #expect(writer.consumeEcho(of: "b", at: 0))
        #expect(writer.spans.spans.map(\.read) == [1, 2])
    }

    @Test("a request's write settled by a later write's echo (coalesced) has no echo to time")
    func coalesced() async {
        let (writer, pipewire) = Self.writer()
        writer.spans.requestRead = 1
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        await writer.write("b", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.consumeEcho(of: "b", at: 0))
        #expect(writer.spans.spans.isEmpty)
    }

    @Test("metadata gone: the write in flight never echoes, its span is dropped")
    func dropped() async {
        let (writer, pipewire) = Self.writer()
        writer.spans.requestRead = 1
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        writer.metadataRemoved()
        await writer.write("a", keys: [Self.key], on: pipewire, flush: true)
        #expect(writer.consumeEcho(of: "a", at: 0))
        #expect(writer.spans.spans.isEmpty)
    }

    @Test("the last 16 spans are kept, oldest first")
    func ring() {
        var tracker = SwitchSpanTracker()
        for index in 1...20 {
            tracker.requestRead = UInt64(index)
            tracker.wrote(ordinal: UInt64(index), sent: UInt64(index))
            tracker.echoed(ordinal: UInt64(index)) { UInt64(index) }
        }
        #expect(tracker.spans.map(\.read) == (5...20).map(UInt64.init))
    }

    @Test("status carries the spans under diagnostics, as CLOCK_MONOTONIC nanoseconds")
    func inStatus() throws {
        let status = ControlWire.Status(
            mode: .cooperative, remote: "pipewire-0", connected: true, sessionManager: "WirePlumber", decision: nil,
            diagnostics: ControlWire.Diagnostics(switchSpans: [ControlWire.SwitchSpanEntry(read: 1, sent: 2, echo: 3)]))
        let line = String(decoding: ControlWire.line(status), as: UTF8.self)
        #expect(line.contains(#""diagnostics":{"switch-spans":[{"echo-ns":3,"read-ns":1,"sent-ns":2}]}"#))
        let read = try JSONDecoder().decode(ControlWire.Status.self, from: Data(line.utf8))
        #expect(read.diagnostics?.switchSpans == [ControlWire.SwitchSpanEntry(read: 1, sent: 2, echo: 3)])
        let old = try JSONDecoder().decode(ControlWire.Status.self, from: Data(#"{"mode":"cooperative","remote":"pipewire-0","connected":true,"subscribers":0,"host-addresses":[]}"#.utf8))
        #expect(old.diagnostics == nil)
    }
}
