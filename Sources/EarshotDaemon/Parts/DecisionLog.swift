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

    /// Records a decision; returns the route change it made, if it changed the default.
    mutating func record(_ decision: Decision, wallClock: Int64) -> RouteChange? {
        last = decision
        guard decision.routeChanged else { return nil }
        lastRouteChange = decision
        guard let reason = decision.reason else { return nil }
        history.append(.init(at: wallClock, current: decision.defaultSink, previous: decision.previous, reason: reason.rawValue))
        if history.count > PersistedState.historyLimit { history.removeFirst(history.count - PersistedState.historyLimit) }
        return RouteChange(
            at: wallClock, reason: reason, previous: decision.previous, current: decision.defaultSink,
            accessory: decision.trigger.accessory?.description, summary: decision.summary,
            previousPort: decision.previousPort, port: decision.port, portEvent: decision.portEvent)
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
        return decision
    }

    /// Logs a decision: every route change, and accessory/config/host decisions that kept it.
    static func log(_ decision: Decision, change: RouteChange?, verbose: Bool, to logger: Logger) {
        if let change {
            let jack = change.portEvent.map { " (port \"\($0.port)\" of \($0.sink) \($0.kind.rawValue))" } ?? ""
            logger.info("route \(change.reason.rawValue): \(decision.previous ?? "(none)") → \(decision.defaultSink ?? "(none)")\(jack); \(decision.summary)")
        } else if decision.trigger.isAccessory || decision.trigger == .configReplaced || decision.trigger == .hostAddressesChanged {
            logger.info("decision (\(decision.trigger)): \(decision.defaultSink ?? "(none)") stays; \(decision.summary)")
        } else {
            return
        }
        if verbose { logger.info("\(DecisionText.render(decision, detail: .full))") }
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
