import PolicyEval
import AudioGraph
import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// The logic of `earshot eval`: load the graph, config and script, run, print.
enum EvalActions {
    struct Request {
        var graphPath: String
        var eventsPath: String?
        var configPath: String?
        var hostAddresses: [String]
        var json: Bool
        var detail: DecisionText.Detail
        /// `--format svg`: a timeline picture of the whole run instead of a line per decision.
        var svg = false
        /// `--against` / `--against-builtin`: the old config to diff the decisions with.
        var against: ConfigSource? = nil
        /// `--strict`: an object or field of the graph that cannot be read is an error, not a
        /// warning.
        var strict = false
    }

    /// Malformed input of any kind exits 2.
    static let inputError: Int32 = 2
    /// An expectation failed, or `--against` found decisions that differ.
    static let checkFailed: Int32 = 1

    static func run(_ request: Request, environment: [String: String], write: (String) -> Void) -> CommandOutcome {
        let stdinUsers = [("--graph", Optional(request.graphPath)), ("--events", request.eventsPath), ("--config", request.configPath), ("--against", request.against?.path)]
            .filter { $0.1 == "-" }.map(\.0)
        guard stdinUsers.count <= 1 else {
            return failure("earshot eval: only one of \(stdinUsers.joined(separator: ", ")) can read standard input (-)")
        }
        let decoded: DecodedGraph
        do {
            let data = Data(try InputFile.bytes(request.graphPath))
            decoded = try PwDumpDecoder.decodeReporting(data, source: InputFile.name(request.graphPath), strict: request.strict)
        } catch let error as InputFile.Failure {
            return failure("earshot eval: graph \(error)")
        } catch {
            return failure("earshot eval: graph \(error)")
        }
        var outcome = run(request, graph: decoded.graph, environment: environment, write: write)
        outcome.standardError = graphWarnings(decoded) + outcome.standardError
        return outcome
    }

    /// `earshot eval: warning: FILE: objects[12].info: missing field "output-port-id"; object
    /// skipped`, one line each, then the count when more were skipped than listed.
    static func graphWarnings(_ decoded: DecodedGraph) -> String {
        guard decoded.skipped > 0 else { return "" }
        var lines = decoded.warnings.map { "earshot eval: warning: \($0) (--strict makes this an error)" }
        if decoded.skipped > decoded.warnings.count {
            lines.append("earshot eval: warning: \(decoded.skipped - decoded.warnings.count) more object(s) or field(s) skipped")
        }
        // A skipped object's fields are the graph's: escaped (TerminalText).
        return TerminalText.lines(lines) + "\n"
    }

    private static func run(_ request: Request, graph: Graph, environment: [String: String], write: (String) -> Void) -> CommandOutcome {
        var hosts: [BluetoothAddress] = []
        for text in request.hostAddresses {
            guard let address = BluetoothAddress(text) else {
                return failure("earshot eval: --host-address \"\(text)\" is not a Bluetooth address like AA:BB:CC:DD:EE:FF")
            }
            hosts.append(address)
        }
        let config: PolicyConfig
        do {
            config = try ConfigSource.resolve(explicit: request.configPath, environment: environment, fileExists: InputFile.nameExists).load()
        } catch {
            return failure(lines: error.errors.map(\.description))
        }
        var events: [EvalEvent] = []
        if let path = request.eventsPath {
            let text: String
            do {
                text = try InputFile.text(path)
            } catch {
                return failure("earshot eval: events \(error)")
            }
            do {
                events = try EvalScript.parse(text, source: InputFile.name(path))
            } catch {
                return failure("earshot eval: \(error)")
            }
        }
        let source = request.eventsPath.map(InputFile.name) ?? "<events>"
        if let against = request.against {
            guard request.svg else {
                return EvalDiffActions.run(
                    graph: graph, old: against, new: config, hostAddresses: hosts, events: events, source: source, json: request.json, write: write)
            }
            // The two timelines one above the other; the exit status is the diff's (0: same).
            let diff = EvalDiffActions.run(
                graph: graph, old: against, new: config, hostAddresses: hosts, events: events, source: source, json: false, write: { _ in })
            guard diff.exitCode <= 1, let old = try? against.load() else { return diff }
            var timelines: [(title: String, Timeline)] = []
            for (title, runConfig) in [("old: \(against)", old), ("new", config)] {
                var builder = TimelineBuilder()
                do {
                    try EvalRunner.run(graph: graph, config: runConfig, hostAddresses: hosts, events: events, source: source) { decision, event in
                        builder.record(decision, event: event)
                    }
                } catch {
                    return failure("earshot eval: \(error)")
                }
                timelines.append((title, builder.finish()))
            }
            write(String(SVGTimelineRenderer.render(timelines).dropLast()))
            return CommandOutcome(exitCode: diff.exitCode)
        }
        if !request.json && !request.svg { write(DecisionText.header) }
        var timeline = TimelineBuilder()
        // Failed expectations are printed in the stream, where the event settled.
        var checker = EvalExpectationChecker()
        var failed = 0
        func report(_ failures: [ExpectationFailure]) {
            failed += failures.count
            for failure in failures where !request.svg {
                write(request.json ? failure.jsonLine : failure.textLines(detail: request.detail).joined(separator: "\n"))
            }
        }
        do {
            try EvalRunner.run(graph: graph, config: config, hostAddresses: hosts, events: events, source: source) { decision, event in
                report(checker.observe(decision, event: event))
                if request.svg {
                    timeline.record(decision, event: event)
                } else {
                    write(request.json ? DecisionRecord(decision, line: event?.line).jsonLine : DecisionText.render(decision, detail: request.detail))
                }
            }
        } catch {
            return failure("earshot eval: \(error)")
        }
        if request.svg { write(String(SVGTimelineRenderer.render(timeline.finish()).dropLast())) }
        report(checker.finish())
        guard failed == 0 else {
            return CommandOutcome(standardError: "earshot eval: \(failed) expectation(s) failed\n", exitCode: checkFailed)
        }
        return CommandOutcome()
    }

    /// A usage or input error, exit 2. Its text may quote the graph or the script: escaped
    /// (TerminalText), one line.
    static func failure(_ message: String) -> CommandOutcome {
        failure(lines: [message])
    }

    /// Several errors, one line each.
    static func failure(lines: [String]) -> CommandOutcome {
        CommandOutcome(standardError: TerminalText.lines(lines) + "\n", exitCode: inputError)
    }
}
