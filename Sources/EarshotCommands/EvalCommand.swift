import ArgumentParser
import FoundationEssentials
import RoutingPolicy

/// `earshot eval`: a dry run of the policy over a saved graph and a script of events.
struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Dry-run the policy over a saved graph and an event script.",
        // --graph is required; it is declared optional only so the hidden benchmark runs without it.
        usage: "earshot eval --graph <graph> [--events <events>] [--config <config>] [--host-address <host-address> ...] [--format <format>] [--explain <explain>] [--against <old-config> | --against-builtin]",
        discussion: """
            The graph is `pw-dump` output; its `default` metadata gives the user's configured \
            default.

            Events are JSON Lines, one action each, `at` in milliseconds (non-decreasing):
              {"at":0,"register":{"accessory":"AA:BB:CC:DD:EE:FF","reporter":"org.ex.r",
                 "capabilities":["audio-switching","placement"],"placement":"off-head"}}
              {"at":5000,"update":{"accessory":"AA:BB:CC:DD:EE:FF","placement":"on-head"}}
              {"at":9000,"unregister":{"accessory":"AA:BB:CC:DD:EE:FF"}}
              {"at":9500,"add":{ one pw-dump Node or Device object }}
              {"at":9800,"remove":{"node":"<node.name>"}}
              {"at":9900,"select":{"node":"<node.name>"}}
            (a register is one line; it is folded here to fit.) Any line may add \
            "expect":{"default":"<node.name>"} or {"not-default":"<node.name>"}, checked once \
            the event and the timers it starts have settled; a failed one is printed and exits 1.

            --against OLD (or --against-builtin) runs the script under OLD and under --config \
            (or the default search) and prints only the decisions that differ: exit 0 when none \
            does, 1 when some do.

            Prints one decision per event and per timer that fires; after the last event, time \
            runs on until no timer is pending. Exit 2 on a malformed graph, event line, config or \
            address.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, svg }

    @Option(help: "The pw-dump output to start from (required): a file, a pipe such as <(pw-dump), or - for stdin.", completion: .file(extensions: ["json"]))
    var graph: String?

    @Option(help: "The event script (JSON Lines; a file, a pipe, or - for stdin). Without it, only the initial decision is printed.", completion: .file(extensions: ["jsonl", "json"]))
    var events: String?

    @Option(help: "Config file, a pipe, or - for stdin (default: the search order of `earshot config show`).", completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(name: .customLong("host-address"), help: "This host's Bluetooth adapter address (repeatable).")
    var hostAddresses: [String] = []

    @Option(help: "Output format: text, json (one object per line) or svg (a timeline picture of the run).", completion: .list(["text", "json", "svg"]))
    var format: Format = .text

    @Option(help: "Text detail: summary (the winner's tiers; the default) or full (every sink). JSON always has everything.", completion: .list(["summary", "full"]))
    var explain: DecisionText.Detail?

    @Option(help: "Also run under this old config and print only the decisions that differ (exit 1 if any).", completion: .file(extensions: ["toml"]))
    var against: String?

    @Flag(help: "Refuse a graph with an object or field that cannot be read (default: skip it with a warning on stderr).")
    var strict = false

    @Flag(name: .customLong("against-builtin"), help: "Like --against, with the built-in defaults as the old config.")
    var againstBuiltin = false

    @Option(name: .customLong("bench-events"), help: .hidden)
    var benchEvents: Int?

    @Option(name: .customLong("bench-sinks"), help: .hidden)
    var benchSinks = 500

    @Option(name: .customLong("bench-runs"), help: .hidden)
    var benchRuns = 5

    @Option(name: .customLong("bench-noise"), help: .hidden)
    var benchNoise = 0

    @Option(name: .customLong("bench-calls"), help: .hidden)
    var benchCalls = 0

    @Option(name: .customLong("bench-write-graph"), parsing: .upToNextOption, help: .hidden)
    var benchWriteGraph: [String] = []

    @Option(name: .customLong("bench-write-replay"), parsing: .upToNextOption, help: .hidden)
    var benchWriteReplay: [String] = []

    /// The hidden benchmarks run without a graph.
    private var isBenchmark: Bool { benchEvents != nil || benchWriteGraph.count == 2 || benchWriteReplay.count == 3 }

    /// Checked here, not in `run()`: a usage error raised in `validate()` is printed with eval's
    /// own usage (from `run()` ArgumentParser would print the top-level `earshot <subcommand>`).
    func validate() throws {
        if isBenchmark { return }
        guard graph != nil else { throw ValidationError("--graph FILE is required: the pw-dump output to start from (a file, <(pw-dump), or - for stdin)") }
        if format == .svg, explain != nil { throw ValidationError("--explain is for text output; --format svg draws no explanations") }
        guard against == nil || !againstBuiltin else { throw ValidationError("--against and --against-builtin cannot be used together") }
    }

    func run() throws {
        if let benchEvents {
            try EvalBenchmark.run(sinks: benchSinks, events: benchEvents, runs: benchRuns, noise: benchNoise, calls: benchCalls).emit()
            return
        }
        if benchWriteGraph.count == 2, let sinks = Int(benchWriteGraph[0]) {
            try GraphBenchmark.write(sinks: sinks, to: benchWriteGraph[1])
            return
        }
        if benchWriteReplay.count == 3, let events = Int(benchWriteReplay[0]), let sinks = Int(benchWriteReplay[1]) {
            try EvalReplayBenchmark.write(events: events, sinks: sinks, to: benchWriteReplay[2])
            return
        }
        guard let graph else { throw ValidationError("--graph FILE is required") }  // (validate() said so already)
        let output = BufferedOutput()
        let outcome = EvalActions.run(
            EvalActions.Request(graphPath: graph, eventsPath: events, configPath: config, hostAddresses: hostAddresses,
                                json: format == .json, detail: explain ?? .summary, svg: format == .svg,
                                against: against.map(ConfigSource.file) ?? (againstBuiltin ? .builtIn : nil), strict: strict),
            environment: ProcessInfo.processInfo.environment, write: output.write)
        output.flush()
        try outcome.emit()
    }
}

extension DecisionText.Detail: ExpressibleByArgument {}
