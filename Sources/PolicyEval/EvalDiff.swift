import RoutingPolicy
import AudioGraph

/// `earshot eval --against`: the same graph and script under two configs, and the decisions
/// where the resulting default differs.
///
/// Decisions align on the input events: the same script gives both runs the same event
/// sequence, so the initial decision and each event's decision pair one to one. The timer
/// decisions between two events pair by time and trigger; a timer that fires in one run only
/// is compared with the decision the other run still stands by at that point.
public enum EvalDiff {
    public struct Outcome: Sendable {
        public var differences: [EvalDifference]
        /// Aligned places compared (paired decisions plus timers of one run only).
        public var compared: Int
    }

    /// One decision of a run and the event count it follows (its segment of the script).
    struct Step {
        var decision: Decision
        var line: Int?
        /// 0 for the initial decision and the timers before the first event; n for the n-th
        /// event's decision and the timers after it.
        var segment: Int
    }

    public static func run(
        graph: Graph, old: PolicyConfig, new: PolicyConfig, hostAddresses: [BluetoothAddress], events: [EvalEvent], source: String = "<events>"
    ) throws(EvalScriptError) -> Outcome {
        func steps(_ config: PolicyConfig) throws(EvalScriptError) -> [Step] {
            var steps: [Step] = []
            var segment = 0
            try EvalRunner.run(graph: graph, config: config, hostAddresses: hostAddresses, events: events, source: source) { decision, event in
                if event != nil { segment += 1 }
                steps.append(Step(decision: decision, line: event?.line, segment: segment))
            }
            return steps
        }
        return compare(old: try steps(old), new: try steps(new))
    }

    static func compare(old: [Step], new: [Step]) -> Outcome {
        var differences: [EvalDifference] = []
        var compared = 0
        let oldSegments = segments(old), newSegments = segments(new)
        for (oldSegment, newSegment) in zip(oldSegments, newSegments) {
            // The segment's first decision (initial or event) exists in both runs.
            var oldCurrent = oldSegment[0], newCurrent = newSegment[0]
            for place in align(oldSegment, newSegment) {
                compared += 1
                if let step = place.old { oldCurrent = step }
                if let step = place.new { newCurrent = step }
                let anchor = place.old ?? place.new ?? oldCurrent
                if oldCurrent.decision.defaultSink != newCurrent.decision.defaultSink {
                    differences.append(EvalDifference(
                        at: anchor.decision.at, line: anchor.line, trigger: anchor.decision.trigger.description,
                        old: .init(oldCurrent, decided: place.old != nil, otherDefault: newCurrent.decision.defaultSink),
                        new: .init(newCurrent, decided: place.new != nil, otherDefault: oldCurrent.decision.defaultSink)))
                }
                // The input (§8): a difference of its own, when either run decides it.
                let (oldInput, newInput) = (oldCurrent.decision.input, newCurrent.decision.input)
                if oldInput != nil || newInput != nil, oldInput?.defaultSource != newInput?.defaultSource {
                    var difference = EvalDifference(
                        at: anchor.decision.at, line: anchor.line, trigger: anchor.decision.trigger.description,
                        old: .init(input: oldCurrent, decided: place.old != nil, otherDefault: newInput?.defaultSource),
                        new: .init(input: newCurrent, decided: place.new != nil, otherDefault: oldInput?.defaultSource))
                    difference.direction = .input
                    differences.append(difference)
                }
                // Calls (§8): where they record from.
                let (oldCalls, newCalls) = (oldCurrent.decision.calls, newCurrent.decision.calls)
                if oldCalls?.source != newCalls?.source {
                    var difference = EvalDifference(
                        at: anchor.decision.at, line: anchor.line, trigger: anchor.decision.trigger.description,
                        old: .init(decided: place.old != nil, default: oldCalls?.source, reason: nil, decidedBy: nil, winner: nil),
                        new: .init(decided: place.new != nil, default: newCalls?.source, reason: nil, decidedBy: nil, winner: nil))
                    difference.direction = .calls
                    differences.append(difference)
                }
                // What a departure pauses and holds (§7): per decision, where both runs decided
                // (a departure one run makes elsewhere is already a difference of the default).
                let (oldPlayback, newPlayback) = (place.old?.decision.playback, place.new?.decision.playback)
                if place.old != nil, place.new != nil, oldPlayback?.summary != newPlayback?.summary {
                    var difference = EvalDifference(
                        at: anchor.decision.at, line: anchor.line, trigger: anchor.decision.trigger.description,
                        old: .init(decided: place.old != nil, default: oldPlayback?.summary ?? "nothing paused or held", reason: nil, decidedBy: nil, winner: nil),
                        new: .init(decided: place.new != nil, default: newPlayback?.summary ?? "nothing paused or held", reason: nil, decidedBy: nil, winner: nil))
                    difference.direction = .playback
                    differences.append(difference)
                }
            }
        }
        return Outcome(differences: differences, compared: compared)
    }

    private static func segments(_ steps: [Step]) -> [[Step]] {
        var result: [[Step]] = []
        for step in steps {
            if step.segment == result.count { result.append([]) }
            result[result.count - 1].append(step)
        }
        return result
    }

    struct Place {
        var old: Step?
        var new: Step?
    }

    /// Pairs a segment's decisions: the first with the first, then timers by time and trigger
    /// (the n-th timer with a given time and trigger in one run with the n-th in the other),
    /// in time order, the old run's order among equal times.
    static func align(_ old: [Step], _ new: [Step]) -> [Place] {
        struct Key: Hashable {
            var at: Milliseconds
            var trigger: String
            var occurrence: Int
        }
        func keyed(_ steps: ArraySlice<Step>) -> [(Key, Step)] {
            var seen: [Pair: Int] = [:]
            return steps.map { step in
                let pair = Pair(at: step.decision.at, trigger: step.decision.trigger.description)
                let occurrence = seen[pair, default: 0]
                seen[pair] = occurrence + 1
                return (Key(at: pair.at, trigger: pair.trigger, occurrence: occurrence), step)
            }
        }
        let oldTimers = keyed(old.dropFirst()), newTimers = keyed(new.dropFirst())
        let newByKey = Dictionary(newTimers, uniquingKeysWith: { first, _ in first })
        let oldKeys = Set(oldTimers.map(\.0))
        var places = oldTimers.map { key, step in (key.at, Place(old: step, new: newByKey[key])) }
        places += newTimers.filter { !oldKeys.contains($0.0) }.map { key, step in (key.at, Place(old: nil, new: step)) }
        // Stable: Swift's sort is, so equal times keep the old run's order, new-only ones after.
        let timers = places.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
        return [Place(old: old.first, new: new.first)] + timers
    }

    private struct Pair: Hashable {
        var at: Milliseconds
        var trigger: String
    }
}
