import ControlProtocol
import FoundationEssentials
import RoutingPolicy
import Testing
import WireFields

@testable import EarshotDaemon

/// The docs' field tables and the introspection XML's signals are made from the declarations
/// (`wireFields`, `EarshotBusSignals`): these tests fail while a doc differs from them.
/// `scripts/wire-docs` writes them (EARSHOT_WRITE_WIRE_DOCS=1), then regenerates the Swift copy
/// of the XML.
@Suite("wire docs: tables and XML from the declarations")
struct WireDocsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let writing = ProcessInfo.processInfo.environment["EARSHOT_WRITE_WIRE_DOCS"] == "1"

    /// Each generated block of docs/control-protocol.md: its name and its table.
    static let protocolTables: [(name: String, table: String)] = [
        ("status", ControlWire.Status.markdownTable),
        ("driver", ControlWire.DriverEntry.markdownTable),
        ("switch-span", ControlWire.SwitchSpanEntry.markdownTable),
        ("control-counts", ControlWire.ControlSocketCounts.markdownTable),
        ("route-change", ControlWire.RouteChangeEvent.markdownTable),
        ("port-event", PortEvent.markdownTable),
        ("accessory", ControlWire.AccessoryEvent.markdownTable),
        ("configuration", ControlWire.Configuration.markdownTable),
        ("playback", ControlWire.PlaybackEvent.markdownTable),
        ("host-addresses", ControlWire.HostAddressesEvent.markdownTable),
        ("host-address", ControlWire.HostAddressEntry.markdownTable),
        ("calls", CallRoutingOutcome.markdownTable),
        ("call-stream", CallStream.markdownTable),
        ("stream-moved", ControlWire.StreamMovedEvent.markdownTable),
        ("call-source", ControlWire.CallSourceEvent.markdownTable),
    ]

    @Test("docs/control-protocol.md's field tables are the declarations'")
    func protocolDocs() throws {
        try Self.check("docs/control-protocol.md", Self.protocolTables)
    }

    @Test("docs/policy.md's tables of eval's calls are the declarations'")
    func policyDocs() throws {
        try Self.check(
            "docs/policy.md",
            [("calls", CallRoutingOutcome.markdownTable), ("call-stream", CallStream.markdownTable), ("stream-move", StreamMove.markdownTable),
             ("playback-preview", PlaybackPreview.markdownTable), ("playback-preview-stream", PlaybackPreview.Stream.markdownTable)])
    }

    @Test("docs/dbus.md's table of signals is the declarations'")
    func busDocs() throws {
        try Self.check("docs/dbus.md", [("signals", EarshotBusSignals.markdownTable)])
    }

    @Test("dbus/org.earshot.Earshot1.xml has each signal exactly as declared, in order")
    func introspection() throws {
        let url = Self.repository.appendingPathComponent("dbus/org.earshot.Earshot1.xml")
        var xml = try String(contentsOf: url, encoding: .utf8)
        var previous = xml.startIndex
        for (name, element) in EarshotBusSignals.xml {
            let start = try #require(xml.range(of: "    <signal name=\"\(name)\">"), "\(name) is not in the XML")
            let end = try #require(xml.range(of: "    </signal>\n", range: start.lowerBound..<xml.endIndex))
            if Self.writing { xml.replaceSubrange(start.lowerBound..<end.upperBound, with: element) } else {
                #expect(String(xml[start.lowerBound..<end.upperBound]) == element, "regenerate: scripts/wire-docs")
                #expect(start.lowerBound >= previous, "\(name) out of order")
                previous = start.lowerBound
            }
        }
        if Self.writing { try xml.write(to: url, atomically: true, encoding: .utf8) }
        // The daemon serves the XML compiled in: the same text.
        #expect(EarshotBusIntrospection.xml == (try String(contentsOf: url, encoding: .utf8)) || Self.writing)
    }

    @Test("a table lists every declared field with its JSON type, and says which are left out when none")
    func tableShape() {
        let table = ControlWire.DriverEntry.markdownTable
        #expect(table.hasPrefix("| field | type | meaning |\n|---|---|---|\n| `address` | string |"))
        #expect(table.contains("| `battery` | object of integers, left out when none |"))
        #expect(table.contains("| `desktop-battery` | string, left out when none |"))
        // An inlined record's fields stand in its place.
        #expect(ControlWire.ListedAccessory.markdownTable.contains("| `primary-source` | string or null |"))
    }

    /// Compares (or, writing, replaces) each `<!-- wire-fields NAME -->` … `<!-- /wire-fields -->`
    /// block of `path`.
    static func check(_ path: String, _ tables: [(name: String, table: String)]) throws {
        let url = repository.appendingPathComponent(path)
        var text = try String(contentsOf: url, encoding: .utf8)
        for (name, table) in tables {
            let open = "<!-- wire-fields \(name) (generated: scripts/wire-docs) -->\n"
            let start = try #require(text.range(of: open), "\(path) has no block for \(name)")
            let end = try #require(text.range(of: "<!-- /wire-fields -->", range: start.upperBound..<text.endIndex))
            if writing { text.replaceSubrange(start.upperBound..<end.lowerBound, with: table) } else {
                #expect(String(text[start.upperBound..<end.lowerBound]) == table, "\(path): \(name) differs from the declarations; run scripts/wire-docs")
            }
        }
        if writing { try text.write(to: url, atomically: true, encoding: .utf8) }
    }
}
