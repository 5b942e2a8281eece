import WireFields
import Foundation
import PolicyEval
import RoutingPolicy
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The SVG of `earshot eval --format svg`, read back with an XML parser: structure, geometry,
/// escaping and determinism.
struct SVGTimelineRendererTests {
    /// An element of the parsed document.
    final class Element {
        let name: String
        let attributes: [String: String]
        var children: [Element] = []
        var text = ""

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        var classes: [String] { (attributes["class"] ?? "").split(separator: " ").map(String.init) }
        func all(_ name: String, class wanted: String? = nil) -> [Element] {
            children.flatMap { child in
                (child.name == name && (wanted == nil || child.classes.contains(wanted!)) ? [child] : []) + child.all(name, class: wanted)
            }
        }
        func number(_ attribute: String) -> Double { Double(attributes[attribute] ?? "") ?? .nan }
    }

    final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [Element] = []
        var root: Element?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let element = Element(name: name, attributes: attributes)
            stack.last?.children.append(element)
            if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }

    static func parse(_ svg: String) throws -> Element {
        let parser = XMLParser(data: Data(svg.utf8))
        let builder = TreeBuilder()
        parser.delegate = builder
        let ok = parser.parse()
        try #require(ok, "not well-formed XML: \(String(describing: parser.parserError))")
        return try #require(builder.root)
    }

    static let evil = #"alsa_output.a&b<c>"d'e"#

    /// speakers [0, 1000), headphones [1000, 5400), speakers [5400, 8000), then `evil` to the end
    /// (9000 + the 1000 ms tail).
    static let timeline = TimelineBuilder.build([
        TimelineStep(at: 0, defaultSink: "alsa_output.speakers", previous: nil, reason: "initial", cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-head")),
        TimelineStep(at: 1000, defaultSink: "bluez_output.AA_BB_CC_DD_EE_FF.1", previous: "alsa_output.speakers", reason: "placement-changed",
                     cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "on-head")),
        TimelineStep(at: 5000, defaultSink: "bluez_output.AA_BB_CC_DD_EE_FF.1", previous: "bluez_output.AA_BB_CC_DD_EE_FF.1", reason: nil,
                     cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-head")),
        TimelineStep(at: 5400, defaultSink: "alsa_output.speakers", previous: "bluez_output.AA_BB_CC_DD_EE_FF.1", reason: "placement-changed",
                     cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-grace ran out")),
        TimelineStep(at: 6000, defaultSink: "alsa_output.speakers", previous: "alsa_output.speakers", reason: nil, cause: .add(node: evil)),
        TimelineStep(at: 8000, defaultSink: evil, previous: "alsa_output.speakers", reason: "user-override", cause: .select(node: evil)),
        TimelineStep(at: 9000, defaultSink: evil, previous: evil, reason: nil, cause: .remove(node: "alsa_output.gone")),
    ])

    @Test func oneLanePerSinkWithItsLabelAndFullName() throws {
        let svg = try Self.parse(SVGTimelineRenderer.render(Self.timeline))
        #expect(svg.name == "svg")
        #expect(svg.attributes["version"] == "1.1")
        #expect(svg.attributes["font-family"] == "sans-serif")
        let lanes = svg.all("g", class: "lane")
        #expect(lanes.count == 4)
        #expect(lanes.map { $0.all("title").first?.text } == ["alsa_output.speakers", "bluez_output.AA_BB_CC_DD_EE_FF.1", Self.evil, "alsa_output.gone"])
        #expect(lanes.map { $0.all("text", class: "lane-label").first?.text } == ["speakers", "AA_BB_CC_DD_EE_FF.1", #"a&b<c>"d'e"#, "gone"])
    }

    @Test func barsAreProportionalToTheSpans() throws {
        let svg = try Self.parse(SVGTimelineRenderer.render(Self.timeline))
        let lanes = svg.all("g", class: "lane")
        let speakers = lanes[0].all("rect", class: "span")
        let headphones = lanes[1].all("rect", class: "span")
        try #require(speakers.count == 2 && headphones.count == 1)
        // The axis runs from 0 to 10 000 ms.
        #expect(Self.timeline.end == 10_000)
        let left = speakers[0].number("x")
        let perMillisecond = speakers[0].number("width") / 1000
        #expect(abs(headphones[0].number("x") - (left + 1000 * perMillisecond)) < 0.02)
        #expect(abs(headphones[0].number("width") - 4400 * perMillisecond) < 0.02)
        #expect(abs(speakers[1].number("x") - (left + 5400 * perMillisecond)) < 0.02)
        #expect(abs(speakers[1].number("width") - 2600 * perMillisecond) < 0.02)
        let evil = lanes[2].all("rect", class: "span")
        #expect(abs(evil[0].number("x") + evil[0].number("width") - (left + 10_000 * perMillisecond)) < 0.02, "closed at the end of the run")
        // The axis ticks are the whole seconds, labelled in seconds.
        #expect(svg.all("text", class: "tick").map(\.text) == ["0", "1 s", "2 s", "3 s", "4 s", "5 s", "6 s", "7 s", "8 s", "9 s", "10 s"])
    }

    @Test func markersOfEachKindAndTheReasons() throws {
        let svg = try Self.parse(SVGTimelineRenderer.render(Self.timeline))
        let lanes = svg.all("g", class: "lane")
        #expect(lanes[1].all("g", class: "marker").map(\.classes) == Array(repeating: ["marker", "placement"], count: 4))
        #expect(lanes[2].all("g", class: "marker").flatMap(\.classes) == ["marker", "sink-arrived", "marker", "user-override"])
        #expect(lanes[3].all("g", class: "sink-removed").count == 1)
        #expect(lanes[1].all("g", class: "marker").first?.all("title").first?.text == "0 ms: AA:BB:CC:DD:EE:FF off-head")
        #expect(svg.all("text", class: "reason").map(\.text) == ["initial", "placement-changed", "placement-changed", "user-override"])
        #expect(svg.all("text", class: "footnote").isEmpty)
    }

    @Test func placementsWornAreFilledAndOffHollow() throws {
        let timeline = TimelineBuilder.build([
            TimelineStep(at: 0, defaultSink: "a", previous: nil, reason: "initial", cause: .placement(accessory: "a", text: "on-head", worn: true)),
            TimelineStep(at: 500, defaultSink: "a", previous: "a", reason: nil, cause: .placement(accessory: "a", text: "off-head", worn: false)),
        ])
        let circles = try Self.parse(SVGTimelineRenderer.render(timeline)).all("circle")
        #expect(circles.map { $0.attributes["fill"] } == ["#6a3d9a", "#ffffff"])
    }

    @Test func aRunWithoutADefaultIsStillAPicture() throws {
        let svg = try Self.parse(SVGTimelineRenderer.render(TimelineBuilder.build([
            TimelineStep(at: 0, defaultSink: nil, previous: nil, reason: nil, cause: .other),
        ])))
        #expect(svg.all("g", class: "lane").isEmpty)
        #expect(svg.all("text", class: "empty").first?.text == "no sink held the default")
        #expect(svg.all("text", class: "reason").map(\.text) == ["initial"])
        let nothing = try Self.parse(SVGTimelineRenderer.render(TimelineBuilder().finish()))
        #expect(nothing.all("g", class: "timeline").count == 1)
        #expect(try Self.parse(SVGTimelineRenderer.render([])).name == "svg")
    }

    @Test func nodeNamesAreEscaped() throws {
        let text = SVGTimelineRenderer.render(Self.timeline)
        #expect(text.contains("alsa_output.a&amp;b&lt;c&gt;&quot;d&apos;e"))
        #expect(!text.contains(Self.evil))
        let control = TimelineBuilder.build([TimelineStep(at: 0, defaultSink: "bad\u{1}name", previous: nil, reason: "initial", cause: .other)])
        let svg = try Self.parse(SVGTimelineRenderer.render(control))
        #expect(svg.all("title").first?.text == "bad\u{FFFD}name")
    }

    @Test func selfContained() {
        let text = SVGTimelineRenderer.render(Self.timeline)
        for forbidden in ["<script", "<style", "@import", "href", "<image", "url(", "<foreignObject"] {
            #expect(!text.contains(forbidden), "\(forbidden)")
        }
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""))
    }

    @Test func theSameTimelineGivesTheSameBytes() {
        let first = SVGTimelineRenderer.render(Self.timeline)
        let again = SVGTimelineRenderer.render(TimelineBuilder.build(Self.steps()))
        #expect(first == again)
        #expect(first == SVGTimelineRenderer.render(Self.timeline))
    }

    static func steps() -> [TimelineStep] {
        // The same run as `timeline`, rebuilt.
        let evil = Self.evil
        return [
            TimelineStep(at: 0, defaultSink: "alsa_output.speakers", previous: nil, reason: "initial", cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-head")),
            TimelineStep(at: 1000, defaultSink: "bluez_output.AA_BB_CC_DD_EE_FF.1", previous: "alsa_output.speakers", reason: "placement-changed",
                         cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "on-head")),
            TimelineStep(at: 5000, defaultSink: "bluez_output.AA_BB_CC_DD_EE_FF.1", previous: "bluez_output.AA_BB_CC_DD_EE_FF.1", reason: nil,
                         cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-head")),
            TimelineStep(at: 5400, defaultSink: "alsa_output.speakers", previous: "bluez_output.AA_BB_CC_DD_EE_FF.1", reason: "placement-changed",
                         cause: .placement(accessory: "AA:BB:CC:DD:EE:FF", text: "off-grace ran out")),
            TimelineStep(at: 6000, defaultSink: "alsa_output.speakers", previous: "alsa_output.speakers", reason: nil, cause: .add(node: evil)),
            TimelineStep(at: 8000, defaultSink: evil, previous: "alsa_output.speakers", reason: "user-override", cause: .select(node: evil)),
            TimelineStep(at: 9000, defaultSink: evil, previous: evil, reason: nil, cause: .remove(node: "alsa_output.gone")),
        ]
    }

    @Test func twoTimelinesOneAboveTheOtherWithTitles() throws {
        let candidate = TimelineBuilder.build([
            TimelineStep(at: 0, defaultSink: "alsa_output.speakers", previous: nil, reason: "initial", cause: .other),
            TimelineStep(at: 20_000, defaultSink: "alsa_output.hdmi", previous: "alsa_output.speakers", reason: "user-override", cause: .select(node: "alsa_output.hdmi")),
        ])
        let svg = try Self.parse(SVGTimelineRenderer.render([(title: "baseline <old>", Self.timeline), (title: "candidate", candidate)]))
        let panels = svg.all("g", class: "timeline")
        try #require(panels.count == 2)
        #expect(panels.map { $0.all("text", class: "title").first?.text } == ["baseline <old>", "candidate"])
        #expect(panels[0].all("g", class: "lane").count == 4)
        #expect(panels[1].all("g", class: "lane").count == 2)
        // One time axis for both: the candidate runs to 21 000 ms, and 1000 ms is as wide in both.
        let baselineSpeakers = panels[0].all("rect", class: "span")[0]
        let candidateSpeakers = panels[1].all("rect", class: "span")[0]
        #expect(abs(candidateSpeakers.number("width") - 20 * baselineSpeakers.number("width")) < 0.05)
        let lastBaselineLane = try #require(panels[0].all("text", class: "lane-label").last)
        let firstCandidateLane = try #require(panels[1].all("text", class: "lane-label").first)
        #expect(firstCandidateLane.number("y") > lastBaselineLane.number("y"), "the candidate is drawn below")
        #expect(svg.all("g", class: "axis").count == 1)
    }

    @Test func thousandsOfDecisionsStayBounded() throws {
        var steps = [TimelineStep(at: 0, defaultSink: "s0", previous: nil, reason: "initial", cause: .other)]
        var current = "s0"
        for index in 1...5000 {
            let next = "s\(index % 3)"
            steps.append(TimelineStep(at: Milliseconds(index * 37), defaultSink: next, previous: current, reason: next == current ? nil : "user-override",
                                      cause: .select(node: next)))
            current = next
        }
        let text = SVGTimelineRenderer.render(TimelineBuilder.build(steps))
        #expect(text.utf8.count < 1_000_000, "\(text.utf8.count) bytes")
        let svg = try Self.parse(text)
        #expect(svg.all("text", class: "reason").count < 200)
        let notes = svg.all("text", class: "footnote").map(\.text)
        #expect(notes.contains { $0.contains("route-change labels left out where they would overlap") }, "\(notes)")
        #expect(notes.contains { $0.contains("200 of 1667 markers drawn, evenly spread over the run") }, "\(notes)")
        #expect(svg.all("g", class: "lane").allSatisfy { $0.all("g", class: "marker").count <= 200 })
    }
}
