import AudioGraph
import FoundationEssentials

/// A decision as one JSON object: what `earshot eval --format json` prints per line and what
/// the daemon's `status` carries. Absent values are written as null, never left out. It
/// decodes too, so whoever receives it as JSON can render it with `DecisionText`.
public struct DecisionRecord: Codable, Sendable, Hashable {
    /// One tier's value for a sink (a `RankTerm`).
    public struct Term: Codable, Sendable, Hashable {
        public var tier: String
        public var value: String
        public var why: String
    }
    public struct Ranked: Codable, Sendable, Hashable {
        public var node: String
        /// The sink's tier values, in tier order; tiers where it has none are left out.
        public var tiers: [Term]
    }
    public struct Rejected: Codable, Sendable, Hashable {
        public var node: String
        public var why: String
    }
    public struct Failure: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
    }
    /// `{"tier": "worn", "runner-up": "<node>", "why": "beats <node> at worn (put on 5000 ms vs 1200 ms)"}`.
    public struct Decider: Codable, Sendable, Hashable {
        /// A tier of `tier-order`, or `name` for the tie-break.
        public var tier: String
        public var runnerUp: String
        public var why: String

        private enum CodingKeys: String, CodingKey {
            case tier, runnerUp = "runner-up", why
        }
    }

    public var at: Milliseconds
    public var line: Int?
    public var trigger: String
    public var `default`: String?
    public var previous: String?
    public var changed: Bool
    public var reason: String?
    public var summary: String
    public var ranking: [Ranked]
    /// Null with fewer than two eligible sinks.
    public var decidedBy: Decider?
    public var rejected: [Rejected]
    public var error: Failure?
    /// The default's port before and after (its active route's description), when its device
    /// says; the jack or port event that made the decision, if one did.
    public var previousPort: String?
    public var port: String?
    public var portEvent: PortEvent?

    /// The default source decided (§8), beside `default`; null when no source is eligible or
    /// the input does not follow (`[input] follow = "never"`, then `input` is null too).
    public var defaultSource: String?
    /// The input side's decision, in the same fields as the output's.
    public var input: InputRecord?
    /// Calls (§8 `bluetooth-microphone = "calls"`): where they record from, the capture
    /// streams pointed there and this decision's moves; null when calls are not routed.
    public var calls: CallRoutingOutcome?
    /// `earshot eval` (§7): what this decision's departure pauses and holds; null otherwise.
    public var playback: PlaybackPreview?

    /// The input side of a decision: the fields the output has at the top level.
    public struct InputRecord: Codable, Sendable, Hashable {
        public var `default`: String?
        public var previous: String?
        public var changed: Bool
        public var reason: String?
        public var summary: String
        public var ranking: [Ranked]
        public var decidedBy: Decider?
        public var rejected: [Rejected]
        public var previousPort: String?
        public var port: String?
        public var portEvent: PortEvent?

        private enum CodingKeys: String, CodingKey {
            case `default`, previous, changed, reason, summary, ranking, decidedBy = "decided-by", rejected
            case previousPort = "previous-port", port, portEvent = "port-event"
        }

        init(_ input: SourceDecision, of decision: Decision, explaining count: Int?, listRejected: Bool) {
            `default` = input.defaultSource
            previous = input.previous
            changed = input.changed
            reason = input.reason?.rawValue
            summary = input.summary
            let explained = count.map { input.ranking.prefix($0) } ?? input.ranking[...]
            ranking = explained.map { source in
                Ranked(
                    node: source.node,
                    tiers: decision.explanation(of: source, on: .input).terms.map { Term(tier: $0.tier.rawValue, value: $0.value, why: Self.sourceWords($0.why)) })
            }
            decidedBy = decision.decidedBy(in: input.ranking, on: .input).map { Decider(tier: $0.tierName, runnerUp: $0.runnerUp, why: Self.sourceWords($0.why)) }
            rejected = listRejected
                ? input.rejected.map { Rejected(node: $0.node, why: Self.sourceWords(decision.why($0))) }.sorted { $0.node < $1.node } : []
            previousPort = input.previousPort
            port = input.port
            portEvent = input.portEvent
        }

        /// The rules' words are the output's (one explainer ranks both sides, §8): on the input
        /// side they speak of sources.
        /// Byte by byte (Foundation's `replacingOccurrences` bridged every string and was a
        /// fifth of a replay's time); a text without "sink" comes back as it is.
        static func sourceWords(_ text: String) -> String {
            var text = text
            text.makeContiguousUTF8()
            return text.utf8.withContiguousStorageIfAvailable { buffer -> String in
                var result: [UInt8] = []
                var copied = 0
                var i = 0
                while i + 4 <= buffer.count {
                    // "sink" (and so "sinks") → "source".
                    guard buffer[i] == 0x73, buffer[i + 1] == 0x69, buffer[i + 2] == 0x6E, buffer[i + 3] == 0x6B else {
                        i += 1
                        continue
                    }
                    if result.isEmpty { result.reserveCapacity(buffer.count + 16) }
                    result.append(contentsOf: buffer[copied..<i])
                    result.append(contentsOf: [0x73, 0x6F, 0x75, 0x72, 0x63, 0x65])
                    i += 4
                    copied = i
                }
                guard copied > 0 else { return text }
                result.append(contentsOf: buffer[copied...])
                return String(decoding: result, as: UTF8.self)
            } ?? text
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(`default`, forKey: .default)
            try container.encode(previous, forKey: .previous)
            try container.encode(changed, forKey: .changed)
            try container.encode(reason, forKey: .reason)
            try container.encode(summary, forKey: .summary)
            try container.encode(ranking, forKey: .ranking)
            try container.encode(decidedBy, forKey: .decidedBy)
            try container.encode(rejected, forKey: .rejected)
            try container.encode(previousPort, forKey: .previousPort)
            try container.encode(port, forKey: .port)
            try container.encode(portEvent, forKey: .portEvent)
        }
    }

    public init(_ decision: Decision, line: Int? = nil) {
        self.init(decision, line: line, explaining: decision.ranking[...], rejected: decision.rejected)
    }

    /// `explaining`: the ranked sinks to list with their tier values (`DecisionRecordSummary`
    /// lists the winner only).
    /// - Parameter input: build the input's record (the text of a graph without sources leaves
    ///   it out, and does not pay for it).
    init(_ decision: Decision, line: Int?, explaining ranked: ArraySlice<RankedSink>, rejected: [RejectedSink], input withInput: Bool = true) {
        at = decision.at
        self.line = line
        trigger = decision.trigger.description
        `default` = decision.defaultSink
        previous = decision.previous
        changed = decision.changed
        reason = decision.reason?.rawValue
        summary = decision.summary
        ranking = ranked.map { sink in
            Ranked(node: sink.node, tiers: decision.explanation(of: sink).terms.map { Term(tier: $0.tier.rawValue, value: $0.value, why: $0.why) })
        }
        decidedBy = decision.decidedBy.map { Decider(tier: $0.tierName, runnerUp: $0.runnerUp, why: $0.why) }
        // By node name: the engine's order follows hashing, which differs from run to run.
        self.rejected = rejected.map { Rejected(node: $0.node, why: decision.why($0)) }.sorted { $0.node < $1.node }
        error = decision.error.map { Failure(code: $0.code.rawValue, message: $0.message) }
        previousPort = decision.previousPort
        port = decision.port
        portEvent = decision.portEvent
        defaultSource = decision.defaultSource
        let summaryOnly = ranked.count < decision.ranking.count || (rejected.isEmpty && !decision.rejected.isEmpty)
        input = withInput ? decision.input.map { InputRecord($0, of: decision, explaining: summaryOnly ? 1 : nil, listRejected: !summaryOnly) } : nil
        calls = decision.calls
        playback = decision.playback
    }

    /// A record received as JSON (the daemon's status over the control socket).
    public init(json: JSONValue) throws {
        self = try JSONDecoder().decode(DecisionRecord.self, from: JSONEncoder().encode(json))
    }

    private enum CodingKeys: String, CodingKey {
        case at, line, trigger, `default`, previous, changed, reason, summary, ranking, decidedBy = "decided-by", rejected, error
        case previousPort = "previous-port", port, portEvent = "port-event"
        case defaultSource = "default-source", input, calls, playback
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(at, forKey: .at)
        try container.encode(line, forKey: .line)
        try container.encode(trigger, forKey: .trigger)
        try container.encode(`default`, forKey: .default)
        try container.encode(previous, forKey: .previous)
        try container.encode(changed, forKey: .changed)
        try container.encode(reason, forKey: .reason)
        try container.encode(summary, forKey: .summary)
        try container.encode(ranking, forKey: .ranking)
        try container.encode(decidedBy, forKey: .decidedBy)
        try container.encode(rejected, forKey: .rejected)
        try container.encode(error, forKey: .error)
        try container.encode(previousPort, forKey: .previousPort)
        try container.encode(port, forKey: .port)
        try container.encode(portEvent, forKey: .portEvent)
        try container.encode(defaultSource, forKey: .defaultSource)
        try container.encode(input, forKey: .input)
        try container.encode(calls, forKey: .calls)
        try container.encode(playback, forKey: .playback)
    }

    /// One line of JSON, keys sorted so runs diff cleanly.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension DecisionRecord {
    /// Why `winner` ranks above `other` in `decision` (eval's diff explains one run's winner
    /// against the other run's default, not only against its own runner-up).
    package static func decider(in decision: Decision, on direction: AudioDirection = .output, winner: RankedSink, over other: RankedSink) -> Decider {
        let decider = RankExplainer(config: decision.config, hostAddresses: decision.hostAddresses, direction: direction).decidedBy(winner, over: other)
        return Decider(tier: decider.tierName, runnerUp: decider.runnerUp, why: decider.why)
    }
}
