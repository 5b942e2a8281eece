import AudioGraph

/// `earshot eval` without the I/O: a graph, a config and a script in, one decision per event
/// and per fired timer out.
public enum EvalRunner {
    public static func run(
        graph: Graph, config: PolicyConfig, hostAddresses: [BluetoothAddress], events: [EvalEvent], source: String = "<events>",
        onDecision: (Decision, EvalEvent?) -> Void
    ) throws(EvalScriptError) {
        var engine = PolicyEngine(graph: graph, config: config, hostAddresses: hostAddresses)
        onDecision(engine.handle(.start, at: 0).decision, nil)
        for event in events {
            PolicyRun.fireTimers(&engine, upTo: event.at) { decision, _ in onDecision(decision, nil) }
            let outcome: PolicyOutcome
            switch event.action {
            case .accessory(let verb, let subject, .failure(let error)):
                outcome = engine.refused(error, verb: verb, subject: subject, at: event.at)
            case .accessory(_, _, .success(let request)):
                outcome = engine.handle(.accessory(request), at: event.at)
            case .add(let change):
                outcome = engine.handle(.graphChanged(change), at: event.at)
            case .remove(let name):
                guard let node = engine.graph.node(named: name) else {
                    throw EvalScriptError(source: source, line: event.line, message: "remove: no node named \"\(name)\" in the graph at this point")
                }
                outcome = engine.handle(.graphChanged(.removed(node.id)), at: event.at)
            case .select(let name):
                outcome = engine.handle(.userSelectedDefault(name), at: event.at)
            }
            onDecision(outcome.decision, event)
        }
        PolicyRun.fireTimers(&engine, upTo: .max) { decision, _ in onDecision(decision, nil) }
    }
}
