import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// `earshot eval --format svg` as a user runs it, and its picture through a real SVG renderer.
@Suite(.blockingCalls)
struct EvalSVGCLITests {
    static let graph = EvalCLITests.graph
    static let events = EvalCLITests.events

    @Test func svgIsATimelineOfTheFixtureRun() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66", "--format", "svg"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        let svg = result.standardOutput
        #expect(svg.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "))
        #expect(svg.hasSuffix("</svg>\n"))
        // A lane for the speakers, the headphones (which held the default from 5000 to 9400) and
        // HDMI (the user's pick at 9900), and the removed DAC.
        for name in ["alsa_output.pci-0000_00_1f.3.analog-stereo", "bluez_output.AA_BB_CC_DD_EE_FF.1", "alsa_output.pci-0000_00_1f.3.hdmi-stereo", "alsa_output.usb-FiiO_K3-00.analog-stereo"] {
            #expect(svg.contains("<title>\(name)</title>"), "\(name)")
        }
        #expect(svg.contains(#"<g class="marker user-override">"#))
        #expect(svg.contains(#"<g class="marker sink-removed">"#))
        #expect(svg.contains(#"<g class="marker placement">"#))
        #expect(svg.contains(">placement-changed</text>"))
        #expect(svg.contains(">user-override</text>"))
        let again = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66", "--format", "svg"])
        #expect(again.standardOutput == svg, "byte-identical in every run")
    }

    @Test func svgWithExplainIsAUsageError() throws {
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--format", "svg", "--explain", "full"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("--explain"), "\(result.standardError)")
        // --explain still works with text, and svg alone is fine.
        #expect(try EarshotBinary.run(["eval", "--graph", Self.graph, "--explain", "full"]).status == 0)
    }

    @Test func helpNamesTheSvgFormat() throws {
        let result = try EarshotBinary.run(["eval", "--help"])
        #expect(result.standardOutput.contains("svg (a timeline picture of the run)"), "\(result.standardOutput)")
    }

    /// rsvg-convert (Debian librsvg2-bin, installed by scripts/lib/packages.sh) draws the picture
    /// without a complaint. Fails, never skips, when it is missing.
    @Test func aRealRendererDrawsThePicture() throws {
        let rsvg = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let path = try #require(rsvg, "rsvg-convert is missing: apt-get install librsvg2-bin (scripts/lib/packages.sh installs it)")
        let result = try EarshotBinary.run(["eval", "--graph", Self.graph, "--events", Self.events, "--host-address", "11:22:33:44:55:66", "--format", "svg"])
        try #require(result.status == 0, "\(result.standardError)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("day.svg")
        let output = directory.appendingPathComponent("day.png")
        try Data(result.standardOutput.utf8).write(to: input)
        let rendered = try Shell.run([path, "--format", "png", "--output", output.path, input.path], environment: ProcessInfo.processInfo.environment)
        #expect(rendered.status == 0)
        #expect(rendered.standardError.isEmpty, "\(rendered.standardError)")
        let png = try Data(contentsOf: output)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(png.count > 1000)
    }
}
