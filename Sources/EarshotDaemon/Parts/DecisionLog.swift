import WireFields
import ControlProtocol
import AudioGraph
import Logging
import RoutingPolicy

/// What was decided: the latest decision (for `status`), the latest route change (its
/// reason and previous route), and the bounded history of defaults that the state file keeps.
struct DecisionLog {
    private(set) var last: Decision?
    private(set) var lastRouteChange: Decision?
    private(set) var history: [PersistedState.HistoryEntry] = []

    init(history: [PersistedState.HistoryEntry] = []) {
        self.history = Array(history.suffix(PersistedState.historyLimit))
    }

    /// Records a decision; returns the route changes it made: the output's first, then the
    /// input's (§8), each when its default (or its port) changed.
    mutating func record(_ decision: Decision, wallClock: Int64) -> [ControlWire.RouteChangeEvent] {
        last = decision
        var changes: [ControlWire.RouteChangeEvent] = []
        if decision.routeChanged {
            lastRouteChange = decision
            if let reason = decision.reason {
                remember(.init(at: wallClock, current: decision.defaultSink, previous: decision.previous, reason: reason.rawValue))
                changes.append(ControlWire.RouteChangeEvent(
                    at: wallClock, reason: reason, previous: decision.previous, current: decision.defaultSink,
                    accessory: decision.trigger.accessory?.description, summary: decision.summary,
                    previousPort: decision.previousPort, port: decision.port, portEvent: decision.portEvent))
            }
        }
        if let input = decision.input, input.routeChanged {
            lastInputChange = input
            if let reason = input.reason {
                remember(.init(at: wallClock, current: input.defaultSource, previous: input.previous, reason: reason.rawValue, direction: .input))
                changes.append(ControlWire.RouteChangeEvent(
                    at: wallClock, reason: reason, previous: input.previous, current: input.defaultSource,
                    accessory: decision.trigger.accessory?.description, summary: input.summary,
                    previousPort: input.previousPort, port: input.port, portEvent: input.portEvent, direction: .input))
            }
        }
        return changes
    }

    /// The latest change of the default source, for `status`.
    private(set) var lastInputChange: SourceDecision?

    /// Where calls recorded from as last told (§8): a decision that changes it tells again.
    private(set) var callSource: String?

    /// The events of a decision's calls (§8), after its route changes: `call-source` when where
    /// calls record from changed, then a `stream-moved` per move.
    mutating func callEvents(of decision: Decision, wallClock: Int64) -> [ControlWire.Event] {
        var events: [ControlWire.Event] = []
        let source = decision.calls?.source
        if source != callSource {
            events.append(.callSource(ControlWire.CallSourceEvent(at: wallClock, previous: callSource, current: source)))
            callSource = source
        }
        for move in decision.calls?.moves ?? [] {
            events.append(.streamMoved(ControlWire.StreamMovedEvent(at: wallClock, move: move)))
        }
        return events
    }

    /// The calls `status` reports: nil when there are none.
    var callsForStatus: CallRoutingOutcome? {
        forStatus?.calls.flatMap { $0.isEmpty ? nil : $0 }
    }

    private mutating func remember(_ entry: PersistedState.HistoryEntry) {
        history.append(entry)
        if history.count > PersistedState.historyLimit { history.removeFirst(history.count - PersistedState.historyLimit) }
    }

    /// A refused request's decision: reported by `status`, changes nothing else.
    mutating func recordRefusal(_ decision: Decision) {
        last = decision
    }

    /// The latest ranking, with the reason, previous route and trigger of the change that set it.
    var forStatus: Decision? {
        var decision = last
        if let change = lastRouteChange, decision?.changed == false, decision?.defaultSink == change.defaultSink {
            decision?.reason = change.reason
            decision?.previous = change.previous
            decision?.trigger = change.trigger
        }
        if let change = lastInputChange, decision?.input?.changed == false, decision?.input?.defaultSource == change.defaultSource {
            decision?.input?.reason = change.reason
            decision?.input?.previous = change.previous
        }
        return decision
    }

    /// A playback change as the log says it: `playback paused (accessory-removed): NAME (ancestor)
    /// on SINK`, `playback held (other-host): stream 42 (Chromium) on SINK`. Escaped: names are
    /// any client's.
    static func line(_ change: ControlWire.PlaybackEvent) -> String {
        let players = change.players.map { name in change.matches[name].map { "\(name) (\($0))" } ?? name }
        let streams = change.streams.map { stream in "stream \(stream.stream)" + (stream.application.map { " (\($0))" } ?? "") }
        let what = (players + streams).joined(separator: ", ")
        return TerminalText.escape("playback \(change.action.rawValue) (\(change.reason.rawValue)): \(what) on \(change.sink ?? "?")")
    }

    /// Logs the events of a decision's calls, as `earshot watch` prints them.
    static func log(callEvents: [ControlWire.Event], to logger: Logger) {
        for event in callEvents {
            switch event {
            case .streamMoved(let move): logger.info("\(TerminalText.escape("call \(move.sentence)"))")
            case .callSource(let change): logger.info("\(TerminalText.escape(change.sentence))")
            default: break
            }
        }
    }

    /// Logs a decision: every route change, and accessory/config/host decisions that kept it.
    /// Node names and port labels are any client's: each line is escaped (TerminalText), here
    /// as well as by the daemon's handler (EscapingLogHandler), so no name forges a line.
    static func log(_ decision: Decision, changes: [ControlWire.RouteChangeEvent], verbose: Bool, to logger: Logger) {
        if !changes.isEmpty {
            for change in changes {
                let jack = change.portEvent.map { " (port \"\($0.port)\" of \($0.sink) \($0.kind.rawValue))" } ?? ""
                let side = change.direction == .input ? "input " : ""
                logger.info("\(TerminalText.escape("\(side)route \(change.reason.rawValue): \(change.previous ?? "(none)") → \(change.current ?? "(none)")\(jack); \(change.summary)"))")
            }
        } else if decision.trigger.isAccessory || decision.trigger == .configReplaced || decision.trigger == .hostAddressesChanged {
            logger.info("\(TerminalText.escape("decision (\(decision.trigger)): \(decision.defaultSink ?? "(none)") stays; \(decision.summary)"))")
        } else {
            return
        }
        // The explanation a line a record: its lines are escaped one by one (DecisionText), and
        // a record of several lines would have its line feeds escaped by the handler.
        if verbose {
            for line in DecisionText.render(decision, detail: .full).split(separator: "\n") { logger.info("\(line)") }
        }
    }
}

extension DecisionTrigger {
    var accessory: AccessoryIdentity? {
        switch self {
        case .accessory(_, let identity), .timer(_, let identity): identity
        default: nil
        }
    }

    var isAccessory: Bool { accessory != nil }
}
