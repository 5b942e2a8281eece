import RoutingPolicy
import AudioGraph
/// A run of the policy as a picture would show it, without the drawing: one lane per sink, the
/// spans during which each sink held the default, markers for what happened to it (placement
/// reports per accessory, user overrides, arrivals, removals) and the route change at each
/// switch of the default. Built by `TimelineBuilder` from the decisions of `earshot eval` and
/// the script events behind them; `SVGTimelineRenderer` draws it.
public struct Timeline: Sendable, Hashable {
    /// A time span `[start, end)` during which the lane's sink was the default.
    public struct Span: Sendable, Hashable {
        public var start: Milliseconds
        public var end: Milliseconds
        /// The route-change reason the sink became the default with (`initial`, `placement-changed`…).
        public var reason: String?

        public init(start: Milliseconds, end: Milliseconds, reason: String?) {
            self.start = start
            self.end = end
            self.reason = reason
        }
    }

    public struct Marker: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// An accessory reported a placement, or its on-delay / off-grace ran out.
            case placement
            /// `select`: the user chose this sink.
            case userOverride = "user-override"
            /// `add`: the sink appeared.
            case sinkArrived = "sink-arrived"
            /// `remove`: the sink went away.
            case sinkRemoved = "sink-removed"
        }

        public var at: Milliseconds
        public var kind: Kind
        /// What happened, for the marker's tooltip: `AA:BB:CC:DD:EE:FF on-head`.
        public var text: String
        /// A placement: worn (true) or off (false; drawn hollow); nil for other kinds.
        public var worn: Bool?

        public init(at: Milliseconds, kind: Kind, text: String, worn: Bool? = nil) {
            self.at = at
            self.kind = kind
            self.text = text
            self.worn = worn
        }
    }

    public struct Lane: Sendable, Hashable {
        /// The sink's node.name, or `accessory <id>` for an accessory no lane's sink belongs to.
        public var name: String
        /// `name` shortened for the lane's label (`Timeline.shortLabel`).
        public var label: String
        public var spans: [Span]
        /// In time order, at most `Limits.markersPerLane`: beyond it, that many evenly spread
        /// over the lane's markers (the first and the last kept).
        public var markers: [Marker]
        /// Markers left out beyond the cap.
        public var omittedMarkers: Int
        /// A sink's lane (`output`) or a source's (`input`, §8): input lanes come after the
        /// output's, labelled `mic ·`, and their bars are when the source was the default.
        public var direction: AudioDirection = .output
    }

    /// A switch of the default: the sink it went to (nil: none) and why.
    public struct Switch: Sendable, Hashable {
        public var at: Milliseconds
        public var from: String?
        public var to: String?
        public var reason: String

        public init(at: Milliseconds, from: String?, to: String?, reason: String) {
            self.at = at
            self.from = from
            self.to = to
            self.reason = reason
        }
    }

    /// Bounds that keep a picture of thousands of decisions a reasonable size.
    public struct Limits: Sendable, Hashable {
        public var markersPerLane: Int
        /// Lanes beyond this are left out (those that held the default least go first).
        public var lanes: Int

        public init(markersPerLane: Int = 200, lanes: Int = 40) {
            self.markersPerLane = markersPerLane
            self.lanes = lanes
        }
    }

    public var start: Milliseconds
    /// The end of the run: the last decision's time plus `tail(after:)`, so the sink that holds
    /// the default at the end still has a visible bar. Open spans are closed here.
    public var end: Milliseconds
    public var lanes: [Lane]
    public var switches: [Switch]
    /// Lanes left out beyond `Limits.lanes`, by name.
    public var omittedLanes: [String]
    public var decisionCount: Int

    public var omittedMarkers: Int { lanes.reduce(0) { $0 + $1.omittedMarkers } }

    public func lane(named name: String) -> Lane? { lanes.first { $0.name == name } }

    /// The time drawn after the last decision: a tenth of the run, at least a second.
    public static func tail(after duration: Milliseconds) -> Milliseconds { max(1000, duration / 10) }

    /// `alsa_output.pci-0000_00_1f.3.analog-stereo` → `pci-0000_00_1f.3.analog-stereo`,
    /// `bluez_output.AA_BB_CC_DD_EE_FF.1` → `AA_BB_CC_DD_EE_FF.1`: the `*_output.` prefix every
    /// sink shares goes, and a name longer than `maxLength` keeps its start and end around `…`.
    public static func shortLabel(_ name: String, maxLength: Int = 30) -> String {
        var text = Substring(name)
        if let dot = text.firstIndex(of: "."), text[..<dot].hasSuffix("_output") || text[..<dot].hasSuffix("_input"),
            text.index(after: dot) < text.endIndex
        {
            text = text[text.index(after: dot)...]
        }
        guard text.count > maxLength, maxLength >= 5 else { return String(text) }
        let head = (maxLength - 1) / 2
        let tailCount = maxLength - 1 - head
        return String(text.prefix(head)) + "…" + String(text.suffix(tailCount))
    }
}

/// One decision as the timeline needs it.
public struct TimelineStep: Sendable, Hashable {
    public enum Cause: Sendable, Hashable {
        /// `worn`: the placement is worn (true) or off (false), if the step says.
        case placement(accessory: String, text: String, worn: Bool? = nil)
        case select(node: String, direction: AudioDirection = .output)
        case add(node: String, direction: AudioDirection = .output)
        case remove(node: String)
        case other
    }

    public var at: Milliseconds
    public var defaultSink: String?
    public var previous: String?
    public var reason: String?
    public var cause: Cause
    /// A refused request: it changed nothing, so it marks nothing.
    public var refused: Bool
    /// The default source decided (§8), when the input follows.
    public var defaultSource: String?
    public var followsInput = false

    public init(at: Milliseconds, defaultSink: String?, previous: String?, reason: String?, cause: Cause, refused: Bool = false) {
        self.at = at
        self.defaultSink = defaultSink
        self.previous = previous
        self.reason = reason
        self.cause = cause
        self.refused = refused
    }

    /// A decision of `EvalRunner.run` and the script event behind it (nil for the initial
    /// decision and fired timers).
    public init(_ decision: Decision, event: EvalEvent?) {
        var cause = Cause.other
        if case .timer(let kind, let identity) = decision.trigger {
            cause = .placement(accessory: identity.description, text: "\(kind.rawValue) ran out", worn: kind == .onDelay)
        } else if let event {
            cause = Self.cause(of: event.action)
        }
        self.init(
            at: decision.at, defaultSink: decision.defaultSink, previous: decision.previous, reason: decision.reason?.rawValue,
            cause: cause, refused: decision.error != nil)
        if let input = decision.input {
            followsInput = true
            defaultSource = input.defaultSource
            sourceReason = input.reason?.rawValue
        }
    }

    /// Why the default source changed, when it did.
    public var sourceReason: String?

    /// A decision as JSON (`earshot eval --format json`) with the script event behind it.
    public init(_ record: DecisionRecord, event: EvalEvent?) {
        var cause = Cause.other
        if let event {
            cause = Self.cause(of: event.action)
        } else {
            for kind in [PendingPlacement.Kind.onDelay, .offGrace] where record.trigger.hasPrefix(kind.rawValue + " ") {
                cause = .placement(accessory: String(record.trigger.dropFirst(kind.rawValue.count + 1)), text: "\(kind.rawValue) ran out", worn: kind == .onDelay)
            }
        }
        self.init(at: record.at, defaultSink: record.default, previous: record.previous, reason: record.reason, cause: cause, refused: record.error != nil)
        if let input = record.input {
            followsInput = true
            defaultSource = input.default
            sourceReason = input.reason
        }
    }

    private static func cause(of action: EvalEvent.Action) -> Cause {
        switch action {
        case .accessory(_, _, .success(let request)):
            let placement: Placement?
            switch request {
            case .register(_, _, let configuration): placement = configuration.placement
            case .update(_, let update, _):
                if case .set(let value) = update.placement { placement = value } else { placement = nil }
            case .unregister: placement = nil
            }
            if let placement { return .placement(accessory: request.identity.description, text: placement.rawValue, worn: placement.isWorn) }
            return .other
        case .accessory: return .other
        case .add(let change):
            if case .node(let node) = change, node.isAudioSink || node.isAudioSource, let name = node.name {
                return .add(node: name, direction: node.isAudioSource ? .input : .output)
            }
            return .other
        case .remove(let node): return .remove(node: node)
        case .select(let node): return .select(node: node)
        case .selectSource(let node): return .select(node: node, direction: .input)
        case .route, .addStream, .removeStream, .streamTarget, .addPlayer: return .other
        }
    }
}

/// Builds a `Timeline` one decision at a time, in the order a run makes them.
public struct TimelineBuilder: Sendable {
    private struct LaneState {
        var order: Int
        var spans: [Timeline.Span] = []
        var markers: [Timeline.Marker] = []
        var direction: AudioDirection = .output
    }

    public var limits: Timeline.Limits
    private var lanes: [String: LaneState] = [:]
    private var accessoryMarkers: [String: [Timeline.Marker]] = [:]
    private var accessoryOrder: [String] = []
    private var switches: [Timeline.Switch] = []
    private var open: (sink: String, start: Milliseconds, reason: String?)?
    /// The source holding the default source, when the input follows.
    private var openSource: (source: String, start: Milliseconds, reason: String?)?
    private var sourceSteps = 0
    private var start: Milliseconds?
    private var last: Milliseconds = 0
    private var count = 0

    public init(limits: Timeline.Limits = Timeline.Limits()) {
        self.limits = limits
    }

    public mutating func record(_ decision: Decision, event: EvalEvent?) {
        record(TimelineStep(decision, event: event))
    }

    public mutating func record(_ step: TimelineStep) {
        recordSource(step)
        count += 1
        if start == nil { start = step.at }
        last = max(last, step.at)
        if !step.refused {
            switch step.cause {
            case .placement(let accessory, let text, let worn):
                if accessoryMarkers[accessory] == nil { accessoryOrder.append(accessory) }
                accessoryMarkers[accessory, default: []].append(Timeline.Marker(at: step.at, kind: .placement, text: "\(accessory) \(text)", worn: worn))
            case .select(let node, let direction):
                mark(node, Timeline.Marker(at: step.at, kind: .userOverride, text: "select \(node)"), direction: direction)
            case .add(let node, let direction): mark(node, Timeline.Marker(at: step.at, kind: .sinkArrived, text: "add \(node)"), direction: direction)
            case .remove(let node): mark(node, Timeline.Marker(at: step.at, kind: .sinkRemoved, text: "remove \(node)"))
            case .other: break
            }
        }
        // The open span is whoever holds the default; a decision that keeps it changes nothing.
        guard step.defaultSink != open?.sink || (open == nil && count == 1) else { return }
        if let current = open {
            lanes[current.sink]?.spans.append(Timeline.Span(start: current.start, end: step.at, reason: current.reason))
        }
        let reason = step.reason ?? (count == 1 ? RouteChangeReason.initial.rawValue : "changed")
        switches.append(Timeline.Switch(at: step.at, from: open?.sink, to: step.defaultSink, reason: reason))
        if let sink = step.defaultSink {
            ensureLane(sink)
            open = (sink, step.at, reason)
        } else {
            open = nil
        }
    }

    /// The input's own lanes (§8): a span per holder of the default source.
    private mutating func recordSource(_ step: TimelineStep) {
        guard step.followsInput else { return }
        sourceSteps += 1
        guard step.defaultSource != openSource?.source || (openSource == nil && sourceSteps == 1) else { return }
        if let current = openSource {
            lanes[current.source]?.spans.append(Timeline.Span(start: current.start, end: step.at, reason: current.reason))
        }
        let reason = step.sourceReason ?? (sourceSteps == 1 ? RouteChangeReason.initial.rawValue : "changed")
        if let source = step.defaultSource {
            ensureLane(source, direction: .input)
            openSource = (source, step.at, reason)
        } else {
            openSource = nil
        }
    }

    private mutating func ensureLane(_ name: String, direction: AudioDirection = .output) {
        if lanes[name] == nil { lanes[name] = LaneState(order: lanes.count, direction: direction) }
    }

    private mutating func mark(_ node: String, _ marker: Timeline.Marker, direction: AudioDirection = .output) {
        ensureLane(node, direction: direction)
        lanes[node]?.markers.append(marker)
    }

    /// The timeline so far, open spans closed at the end of the run.
    public func finish() -> Timeline {
        let begin = start ?? 0
        let end = last + Timeline.tail(after: last - begin)
        var states = lanes
        if let current = open {
            states[current.sink]?.spans.append(Timeline.Span(start: current.start, end: end, reason: current.reason))
        }
        if let current = openSource {
            states[current.source]?.spans.append(Timeline.Span(start: current.start, end: end, reason: current.reason))
        }
        // Input lanes after every output lane, in the order seen.
        for (name, state) in states where state.direction == .input { states[name]?.order = state.order + 1_000_000 }
        // An accessory's markers go on the lane of its sink: its node name, or a bluez sink
        // named after its address (`bluez_output.AA_BB_…`); otherwise on a lane of its own.
        var extra: [(String, [Timeline.Marker])] = []
        for accessory in accessoryOrder {
            let markers = accessoryMarkers[accessory] ?? []
            let underscored = accessory.replacing(":", with: "_")
            let owner = states.keys.filter { states[$0]?.direction == .output && ($0 == accessory || (accessory.contains(":" as Character) && $0.firstRange(of: underscored) != nil)) }
                .min { (states[$0]?.order ?? 0) < (states[$1]?.order ?? 0) }
            if let owner {
                states[owner]?.markers.append(contentsOf: markers)
            } else {
                extra.append(("accessory \(accessory)", markers))
            }
        }
        for (name, markers) in extra {
            states[name] = LaneState(order: states.count, markers: markers)
        }
        var ordered = states.sorted { $0.value.order < $1.value.order }
        var omittedLanes: [String] = []
        if ordered.count > limits.lanes {
            // Keep the lanes that held the default longest (then the first seen).
            func held(_ state: LaneState) -> Milliseconds { state.spans.reduce(0) { $0 + ($1.end - $1.start) } }
            let kept = Set(ordered.enumerated().sorted { a, b in
                let (ha, hb) = (held(a.element.value), held(b.element.value))
                return ha != hb ? ha > hb : a.offset < b.offset
            }.prefix(limits.lanes).map(\.element.key))
            omittedLanes = ordered.map(\.key).filter { !kept.contains($0) }
            ordered = ordered.filter { kept.contains($0.key) }
        }
        let built = ordered.map { name, state in
            // Stable by time: the order seen stands for markers at the same time.
            let markers = state.markers.enumerated().sorted { $0.element.at != $1.element.at ? $0.element.at < $1.element.at : $0.offset < $1.offset }.map(\.element)
            let kept = Self.spread(markers, cap: max(0, limits.markersPerLane))
            return Timeline.Lane(
                name: name, label: (state.direction == .input ? "mic · " : "") + Timeline.shortLabel(name), spans: state.spans, markers: kept,
                omittedMarkers: markers.count - kept.count, direction: state.direction)
        }
        return Timeline(
            start: begin, end: end, lanes: Self.distinctLabels(built), switches: switches, omittedLanes: omittedLanes, decisionCount: count)
    }

    /// At most `cap` of `markers`, evenly spread: the first, the last and equal steps between.
    static func spread(_ markers: [Timeline.Marker], cap: Int) -> [Timeline.Marker] {
        guard markers.count > cap else { return markers }
        guard cap > 1 else { return Array(markers.prefix(cap)) }
        return (0..<cap).map { markers[$0 * (markers.count - 1) / (cap - 1)] }
    }

    /// Two sinks whose short labels collide keep a longer form of their names.
    private static func distinctLabels(_ lanes: [Timeline.Lane]) -> [Timeline.Lane] {
        var counts: [String: Int] = [:]
        for lane in lanes { counts[lane.label, default: 0] += 1 }
        return lanes.map { lane in
            var lane = lane
            if (counts[lane.label] ?? 0) > 1 { lane.label = (lane.direction == .input ? "mic · " : "") + Timeline.shortLabel(lane.name, maxLength: 60) }
            return lane
        }
    }

    /// The timeline of a whole run: every decision with the event behind it.
    public static func build(_ steps: [TimelineStep], limits: Timeline.Limits = Timeline.Limits()) -> Timeline {
        var builder = TimelineBuilder(limits: limits)
        for step in steps { builder.record(step) }
        return builder.finish()
    }
}
