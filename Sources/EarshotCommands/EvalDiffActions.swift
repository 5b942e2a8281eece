import PolicyEval
import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// `earshot eval --against OLD`: the loaded graph and script under OLD and under the config
/// eval would use, printing only the decisions that differ.
enum EvalDiffActions {
    static func run(
        graph: Graph, old oldSource: ConfigSource, new: PolicyConfig, hostAddresses: [BluetoothAddress], events: [EvalEvent], source: String,
        json: Bool, write: (String) -> Void
    ) -> CommandOutcome {
        let old: PolicyConfig
        do {
            old = try oldSource.load()
        } catch {
            return EvalActions.failure(lines: error.errors.map { "--against: \($0)" })
        }
        let outcome: EvalDiff.Outcome
        do {
            outcome = try EvalDiff.run(graph: graph, old: old, new: new, hostAddresses: hostAddresses, events: events, source: source)
        } catch {
            return EvalActions.failure("earshot eval: \(error)")
        }
        if json {
            outcome.differences.forEach { write($0.jsonLine) }
        } else {
            EvalDiffText.render(outcome.differences).forEach(write)
        }
        guard outcome.differences.isEmpty else {
            // On stderr, so standard output stays the table (or JSON) alone.
            return CommandOutcome(
                standardError: "earshot eval: \(outcome.differences.count) of \(outcome.compared) decisions differ from \(oldSource)\n",
                exitCode: EvalActions.checkFailed)
        }
        return CommandOutcome(standardError: "earshot eval: no decision differs from \(oldSource) (\(outcome.compared) compared)\n")
    }
}

extension ConfigSource {
    /// The path this source reads, if it is a file (`-` is standard input).
    var path: String? {
        if case .file(let path) = self { return path }
        return nil
    }
}
