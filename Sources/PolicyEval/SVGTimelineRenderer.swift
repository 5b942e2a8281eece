import AudioGraph
import RoutingPolicy
/// Draws `Timeline`s as one self-contained SVG 1.1 document: no scripts, no external fonts,
/// images or style sheets, every text escaped, and the same timelines give the same bytes.
/// Several timelines (a baseline and a candidate) are drawn one above the other with their
/// titles, on one shared time axis.
///
/// Structure (what tests and tools can rely on): each timeline is a `<g class="timeline">`
/// with a `<text class="title">` when titled; each lane a `<g class="lane">` holding a
/// `<title>` (the full node.name), a `<text class="lane-label">`, one `<rect class="span">`
/// per span and one `<g class="marker KIND">` per marker (`placement`, `user-override`,
/// `sink-arrived`, `sink-removed`); route changes are `<text class="reason">`; the axis is
/// `<g class="axis">` of `<text class="tick">`; notes are `<text class="footnote">`.
public enum SVGTimelineRenderer {
    public static let width = 1000.0
    static let plotLeft = 230.0
    static let plotRight = 980.0
    static let laneHeight = 24.0
    static let barHeight = 12.0
    static let reasonRow = 24.0
    static let titleRow = 22.0
    static let fontSize = 10.0
    /// A rough advance of one character at `fontSize` in a sans-serif face, for keeping labels apart.
    static let characterWidth = 5.6
    static let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]
    static let markerColours: [Timeline.Marker.Kind: String] = [
        .placement: "#6a3d9a", .userOverride: "#d62728", .sinkArrived: "#2ca02c", .sinkRemoved: "#333333",
    ]

    /// One timeline, untitled.
    public static func render(_ timeline: Timeline) -> String {
        render([(title: "", timeline)])
    }

    /// Timelines one above the other, each under its title, on one time axis.
    public static func render(_ timelines: [(title: String, Timeline)]) -> String {
        let start = timelines.map(\.1.start).min() ?? 0
        let end = max(timelines.map(\.1.end).max() ?? 1, start + 1)
        let scale = Scale(start: start, end: end, left: plotLeft, right: plotRight)

        var body = SVGWriter(declaration: false, depth: 1)
        var y = 10.0
        var notes: [String] = []
        for (index, entry) in timelines.enumerated() {
            let (title, timeline) = entry
            body.start("g", [("class", "timeline")])
            if !title.isEmpty {
                body.text("text", [("class", "title"), ("x", "10"), ("y", SVGWriter.number(y + 15)), ("font-size", "13"), ("font-weight", "bold")], title)
                y += titleRow
            }
            let prefix = timelines.count > 1 ? (title.isEmpty ? "timeline \(index + 1)" : title) + ": " : ""
            let (labelled, skipped) = drawReasons(timeline, scale: scale, y: y, into: &body)
            y += reasonRow
            let lanesTop = y
            for (laneIndex, lane) in timeline.lanes.enumerated() {
                drawLane(lane, colour: palette[laneIndex % palette.count], scale: scale, y: y, into: &body)
                y += laneHeight
            }
            if timeline.lanes.isEmpty {
                body.text("text", [("class", "empty"), ("x", SVGWriter.number(plotLeft)), ("y", SVGWriter.number(y + 15)), ("font-size", "11"), ("fill", "#666666")], "no sink held the default")
                y += laneHeight
            }
            drawSwitchLines(labelled, scale: scale, top: lanesTop, bottom: y, into: &body)
            body.close()
            y += 8
            if skipped > 0 {
                notes.append(prefix + "\(skipped) of \(timeline.switches.count) route-change labels left out where they would overlap")
            }
            for lane in timeline.lanes where lane.omittedMarkers > 0 {
                notes.append(prefix + "\(lane.label): \(lane.markers.count) of \(lane.markers.count + lane.omittedMarkers) markers drawn, evenly spread over the run")
            }
            if !timeline.omittedLanes.isEmpty {
                notes.append(prefix + "\(timeline.omittedLanes.count) more sinks not drawn (they held the default least)")
            }
        }
        drawAxis(scale, top: 10, y: y, into: &body)
        y += 30
        body.text("text", [("class", "legend"), ("x", "10"), ("y", SVGWriter.number(y)), ("font-size", SVGWriter.number(fontSize)), ("fill", "#333333")],
                  "bars: the default sink (mic · lanes: the default source) · ● worn / ○ off (placement) · ◆ user override · ▲ sink arrived · ▼ sink removed · labels: route-change reason")
        y += 14
        for note in notes {
            body.text("text", [("class", "footnote"), ("x", "10"), ("y", SVGWriter.number(y)), ("font-size", SVGWriter.number(fontSize)), ("fill", "#333333")], "* " + note)
            y += 14
        }
        let height = y + 6
        var svg = SVGWriter()
        svg.start("svg", [
            ("xmlns", "http://www.w3.org/2000/svg"), ("version", "1.1"),
            ("width", SVGWriter.number(width)), ("height", SVGWriter.number(height)),
            ("viewBox", "0 0 \(SVGWriter.number(width)) \(SVGWriter.number(height))"),
            ("font-family", "sans-serif"),
        ])
        svg.empty("rect", [("class", "background"), ("x", "0"), ("y", "0"), ("width", SVGWriter.number(width)), ("height", SVGWriter.number(height)), ("fill", "#ffffff")])
        svg.append(body)
        return svg.finish()
    }

    struct Scale {
        var start: Milliseconds
        var end: Milliseconds
        var left: Double
        var right: Double

        func x(_ time: Milliseconds) -> Double {
            let clamped = min(max(time, start), end)
            return left + Double(clamped - start) / Double(end - start) * (right - left)
        }
    }

    private static func drawLane(_ lane: Timeline.Lane, colour: String, scale: Scale, y: Double, into body: inout SVGWriter) {
        body.start("g", [("class", "lane")])
        body.text("title", [], lane.name)
        body.empty("line", [("x1", SVGWriter.number(plotLeft)), ("y1", SVGWriter.number(y + laneHeight)), ("x2", SVGWriter.number(plotRight)), ("y2", SVGWriter.number(y + laneHeight)), ("stroke", "#e6e6e6"), ("stroke-width", "1")])
        body.text("text", [("class", "lane-label"), ("x", SVGWriter.number(plotLeft - 8)), ("y", SVGWriter.number(y + laneHeight / 2 + 4)), ("font-size", "11"), ("text-anchor", "end")], lane.label)
        // Spans closer than half a pixel are one bar: a lane never has more bars than pixels.
        var merged: [(Double, Double, String?)] = []
        for span in lane.spans {
            let (left, right) = (scale.x(span.start), scale.x(span.end))
            if let last = merged.last, left - last.1 < 0.5 {
                merged[merged.count - 1].1 = max(last.1, right)
            } else {
                merged.append((left, right, span.reason))
            }
        }
        let barTop = y + (laneHeight - barHeight) / 2
        for (left, right, _) in merged {
            body.empty("rect", [
                ("class", lane.direction == .input ? "span input" : "span"), ("x", SVGWriter.number(left)), ("y", SVGWriter.number(barTop)),
                ("width", SVGWriter.number(max(right - left, 0.5))), ("height", SVGWriter.number(barHeight)), ("fill", colour),
            ])
        }
        // A marker in the same pixel as the last one that looks the same is drawn once.
        var lastX: [String: Double] = [:]
        let middle = y + laneHeight / 2
        for marker in lane.markers {
            let x = scale.x(marker.at)
            let look = "\(marker.kind.rawValue) \(marker.worn.map(String.init) ?? "")"
            if let previous = lastX[look], x - previous < 1 { continue }
            lastX[look] = x
            let colour = markerColours[marker.kind] ?? "#000000"
            body.start("g", [("class", "marker \(marker.kind.rawValue)")])
            body.text("title", [], "\(marker.at) ms: \(marker.text)")
            let shape: [(StaticString, String)]
            switch marker.kind {
            case .placement:
                shape = []
                // Worn filled, off hollow.
                let off = marker.worn == false
                body.empty("circle", [
                    ("cx", SVGWriter.number(x)), ("cy", SVGWriter.number(middle)), ("r", off ? "3.5" : "4"), ("fill", off ? "#ffffff" : colour),
                    ("stroke", off ? colour : "#ffffff"), ("stroke-width", off ? "1.5" : "1"),
                ])
            case .userOverride:
                shape = [("points", polygon([(x, middle - 5), (x + 5, middle), (x, middle + 5), (x - 5, middle)]))]
            case .sinkArrived:
                shape = [("points", polygon([(x, middle - 5), (x + 5, middle + 4), (x - 5, middle + 4)]))]
            case .sinkRemoved:
                shape = [("points", polygon([(x - 5, middle - 4), (x + 5, middle - 4), (x, middle + 5)]))]
            }
            if marker.kind != .placement {
                body.empty("polygon", shape + [("fill", colour), ("stroke", "#ffffff"), ("stroke-width", "1")])
            }
            body.close()
        }
        body.close()
    }

    private static func polygon(_ points: [(Double, Double)]) -> String {
        points.map { SVGWriter.number($0.0) + "," + SVGWriter.number($0.1) }.joined(separator: " ")
    }

    /// The route-change reason at each switch of the default, in the first of two rows where it
    /// overlaps no label before it; left out where neither row has room. Returns how many were
    /// left out. Returns the times of the labelled switches and how many were left out.
    private static func drawReasons(_ timeline: Timeline, scale: Scale, y: Double, into body: inout SVGWriter) -> (labelled: [Milliseconds], skipped: Int) {
        var freeFrom = [-Double.infinity, -Double.infinity]
        var skipped = 0
        var labelled: [Milliseconds] = []
        for change in timeline.switches {
            let x = scale.x(change.at)
            let textWidth = Double(change.reason.count) * characterWidth * 0.9
            // Near the right edge the label ends at its switch instead of starting there.
            let fitsRight = x + 2 + textWidth <= width - 4
            let left = fitsRight ? x + 2 : x - 2 - textWidth
            guard let row = freeFrom.indices.first(where: { left >= freeFrom[$0] }) else {
                skipped += 1
                continue
            }
            freeFrom[row] = left + textWidth + 6
            labelled.append(change.at)
            body.text("text", [
                ("class", "reason"), ("x", SVGWriter.number(fitsRight ? x + 2 : x - 2)), ("y", SVGWriter.number(y + 10 + Double(row) * 10)), ("font-size", "9"),
                ("text-anchor", fitsRight ? "start" : "end"), ("fill", "#444444"),
            ], change.reason)
        }
        return (labelled, skipped)
    }

    /// A thin line from each drawn reason label down through the lanes.
    private static func drawSwitchLines(_ times: [Milliseconds], scale: Scale, top: Double, bottom: Double, into body: inout SVGWriter) {
        var last = -Double.infinity
        var path = ""
        for time in times {
            let x = scale.x(time)
            guard x - last >= 1 else { continue }
            last = x
            path += "M" + SVGWriter.number(x) + " " + SVGWriter.number(top - 4) + "V" + SVGWriter.number(bottom) + " "
        }
        guard !path.isEmpty else { return }
        body.empty("path", [("class", "switches"), ("d", String(path.dropLast())), ("stroke", "#999999"), ("stroke-width", "0.6"), ("stroke-dasharray", "2,2"), ("fill", "none")])
    }

    private static func drawAxis(_ scale: Scale, top: Double, y: Double, into body: inout SVGWriter) {
        body.start("g", [("class", "axis")])
        body.empty("line", [("x1", SVGWriter.number(plotLeft)), ("y1", SVGWriter.number(y)), ("x2", SVGWriter.number(plotRight)), ("y2", SVGWriter.number(y)), ("stroke", "#000000"), ("stroke-width", "1")])
        for tick in TimeTicks.ticks(from: scale.start, to: scale.end) {
            let x = scale.x(tick.at)
            body.empty("line", [("x1", SVGWriter.number(x)), ("y1", SVGWriter.number(y)), ("x2", SVGWriter.number(x)), ("y2", SVGWriter.number(y + 5)), ("stroke", "#000000"), ("stroke-width", "1")])
            body.text("text", [("class", "tick"), ("x", SVGWriter.number(x)), ("y", SVGWriter.number(y + 17)), ("font-size", SVGWriter.number(fontSize)), ("text-anchor", "middle")], tick.label)
        }
        body.close()
    }
}

/// Readable ticks for a time axis: a step of 1, 2 or 5 (or 15 and 30 on the clock) in ms, s,
/// min, h or days, chosen so that at most `maxCount` intervals fit; labels in the step's unit.
public enum TimeTicks {
    public struct Tick: Sendable, Hashable {
        public var at: Milliseconds
        public var label: String
    }

    static let second: Milliseconds = 1000
    static let minute: Milliseconds = 60 * second
    static let hour: Milliseconds = 60 * minute
    static let day: Milliseconds = 24 * hour

    /// Steps in increasing order, each with its unit.
    static func steps() -> [(step: Milliseconds, unit: Milliseconds, name: String)] {
        var steps: [(Milliseconds, Milliseconds, String)] = []
        for value: Milliseconds in [1, 2, 5, 10, 20, 50, 100, 200, 500] { steps.append((value, 1, "ms")) }
        for value: Milliseconds in [1, 2, 5, 10, 15, 30] { steps.append((value * second, second, "s")) }
        for value: Milliseconds in [1, 2, 5, 10, 15, 30] { steps.append((value * minute, minute, "min")) }
        for value: Milliseconds in [1, 2, 3, 6, 12] { steps.append((value * hour, hour, "h")) }
        var days: Milliseconds = 1
        while days <= 1_000_000_000 {
            for factor: Milliseconds in [1, 2, 5] { steps.append((days * factor * day, day, "d")) }
            days *= 10
        }
        return steps
    }

    public static func step(for duration: Milliseconds, maxCount: Int = 10) -> (step: Milliseconds, unit: Milliseconds, name: String) {
        let all = steps()
        return all.first { duration / $0.step <= Milliseconds(maxCount) } ?? all[all.count - 1]
    }

    public static func ticks(from start: Milliseconds, to end: Milliseconds, maxCount: Int = 10) -> [Tick] {
        guard end > start else { return [Tick(at: start, label: label(start, unit: 1, name: "ms"))] }
        let chosen = step(for: end - start, maxCount: maxCount)
        var at = (start + chosen.step - 1) / chosen.step * chosen.step
        var ticks: [Tick] = []
        while at <= end {
            ticks.append(Tick(at: at, label: label(at, unit: chosen.unit, name: chosen.name)))
            at += chosen.step
        }
        return ticks
    }

    static func label(_ at: Milliseconds, unit: Milliseconds, name: String) -> String {
        at == 0 ? "0" : "\(at / unit) \(name)"
    }
}
