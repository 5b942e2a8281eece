import Foundation

import RoutingPolicy

/// `earshot eval --bench-events N` (hidden; run by `scripts/bench eval`): the engine alone, no
/// JSON and no printing, over a generated workload. Reports medians of several runs and the
/// time per event at a quarter, half and all of the events, to show time grows linearly.
enum EvalBenchmark {
    struct Measurement {
        var seconds: Double
        var events: Int
        var decisions: Int
        var scorings: Int
    }

    static func run(sinks: Int, events: Int, runs: Int, noise: Int = 0) -> CommandOutcome {
        let mix = noise > 0 ? " (\(noise) port/link events after each other input)" : ""
        var lines = ["eval bench: \(sinks) sinks, \(events) events\(mix), median of \(max(1, runs)) runs"]
        var full: Measurement?
        for fraction in [4, 2, 1] {
            let workload = BenchmarkWorkload(sinks: sinks, events: max(1, events / fraction), noise: noise)
            let measurements = (0..<max(1, runs)).map { _ in measure(workload) }.sorted { $0.seconds < $1.seconds }
            let median = measurements[measurements.count / 2]
            lines.append(String(
                format: "  %7d events: %8.3f s  %6.2f µs/event  (%d decisions)", median.events, median.seconds,
                median.seconds / Double(median.events) * 1e6, median.decisions))
            full = median
        }
        if let full {
            lines.append(String(format: "events/s: %.0f", Double(full.events) / full.seconds))
            lines.append(String(format: "decisions/s: %.0f", Double(full.decisions) / full.seconds))
            lines.append(String(format: "sink-scorings/s: %.0f", Double(full.scorings) / full.seconds))
        }
        return CommandOutcome(standardOutput: lines.joined(separator: "\n") + "\n")
    }

    private static func measure(_ workload: BenchmarkWorkload) -> Measurement {
        var engine = PolicyEngine(graph: workload.graph, config: workload.config, hostAddresses: workload.hostAddresses)
        var decisions = 0
        var scorings = 0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            PolicyRun.run(&engine, inputs: workload.inputs) { decision, _ in
                decisions += 1
                scorings += decision.ranking.count + decision.rejected.count
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Measurement(seconds: seconds, events: workload.inputs.count, decisions: decisions, scorings: scorings)
    }
}
