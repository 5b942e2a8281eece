import AudioGraph
import Foundation
import SystemBridge
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

// earshot-bench switch [--json FILE] [--streams 1,10,100] [--switches 200] [--cli-switches 200]
//                      [--idle-seconds 30] [--start-runs 20] [--earshot PATH]
// earshot-bench leak [OPTIONS] | earshot-bench leak-table FILE...: audio leaked on the speakers
// when a worn headset leaves (Leak.swift).
// Side by side on a private PipeWire (docs/performance.md): Earshot's placement → relink paths
// (A-coop with WirePlumber, A-solo standalone), WirePlumber's own (B), raw links (C), the
// command lines (D), gaps, RSS and idle CPU. Timestamps: CLOCK_MONOTONIC, the start just
// before the request is sent, the end in the observer's callback that completes the switch.
// Earshot's own span of A's switches comes from the daemon's stamps (the same clock), read
// from `status` between switches (OwnSpans).

let speakers = "alsa_output.sandbox.analog-stereo"
let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
let address = "AA:BB:CC:DD:EE:FF"

struct Options {
    var json: String?
    var streams = [1, 10, 100]
    var switches = 200
    var cliSwitches = 200
    var idleSeconds = 30
    var startRuns = 20
    var earshot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("earshot").path

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        guard rest.popFirst() == "switch" else { throw BenchError("usage: earshot-bench switch [--json FILE] [--streams 1,10,100] [--switches N] [--cli-switches N] [--idle-seconds S] [--start-runs N] [--earshot PATH]\n\(LeakOptions.usage)\nusage: earshot-bench leak-table FILE...") }
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
            switch flag {
            case "--json": json = value
            case "--streams": streams = value.split(separator: ",").compactMap { Int($0) }
            case "--switches": switches = Int(value) ?? switches
            case "--cli-switches": cliSwitches = Int(value) ?? cliSwitches
            case "--idle-seconds": idleSeconds = Int(value) ?? idleSeconds
            case "--start-runs": startRuns = Int(value) ?? startRuns
            case "--earshot": earshot = value
            default: throw BenchError("unknown option \(flag)")
            }
        }
    }
}

func log(_ text: String) { FileHandle.standardError.write(Data("[bench] \(text)\n".utf8)) }

/// One switch: arm the watcher, take t0, act, wait for the callback that completes it.
func measure(_ observer: PipeWireConnection, streams: [ObjectID: Int], to target: ObjectID, into series: inout Series, _ act: () async throws -> Void) async throws {
    let probe = SwitchProbe()
    let wait = try observer.arm("switch to \(target)", routed(streams: streams, target: target, probe: probe))
    let heard = SwitchProbe()
    let audibleWait = try observer.arm("audible on \(target)", audible(streams: streams, target: target, probe: heard))
    let start = monotonicNanos()
    try await act()
    do {
        _ = try await wait.value(timeout: .seconds(20))
    } catch {
        let graph = observer.snapshot()
        let state = streams.keys.sorted().map { stream in
            "\(graph.nodes[stream]?.name ?? "#\(stream)") ports \(graph.ports(of: stream, direction: .output).count) want \(streams[stream] ?? -1) → \(graph.outgoingLinks(of: stream).map { "\($0.inputNode)" })"
        }
        throw BenchError("switch to \(target) did not complete: \(error); default \(graph.configuredDefaultSinkName ?? "-"); \(state)")
    }
    guard let done = probe.done else { throw BenchError("switch finished without a timestamp") }
    // Done before the start: it was in place already (only a warm-up asks for that).
    guard done >= start else {
        _ = try? await audibleWait.value(timeout: .seconds(5))
        return
    }
    series.millis.append(Double(done - start) / 1e6)
    series.dropouts.append(probe.dropoutMillis)
    // Audio until every new link is active (after the switch as measured above, which ends
    // when the links exist); a switch whose links never all become active records nothing.
    if (try? await audibleWait.value(timeout: .seconds(5))) != nil { series.silences.append(heard.dropoutMillis) }
    if let gap = probe.gapDescription {
        series.gaps += 1
        // WirePlumber unlinks before relinking (every B, A-coop and D switch has a gap);
        // the make-before-break paths should have none, so each is shown.
        if ["A-solo", "C"].contains(series.name) { log("\(series.name): gap in switch \(series.millis.count) to \(target): \(gap)") }
    }
}

/// Path A: `count` placement updates on one open control connection, alternating on-head
/// (sinks[1]) and off-head (sinks[0]), each timed until every stream plays to its sink. Also
/// Earshot's own span of each switch (`OwnSpans`): the daemon's stamps, read from `status`
/// every `OwnSpans.readEvery` switches, between switches (the daemon keeps the last 16).
func placementSwitches(
    _ name: String, _ observer: PipeWireConnection, streams: [ObjectID: Int], sinks: [ObjectID], control: ControlLine, count: Int
) async throws -> (Series, OwnSpans) {
    var series = Series(name: name)
    var starts: [UInt64] = []
    var spans: [DaemonSpan] = []
    for index in 0..<count {
        let to = (index + 1) % 2
        try await measure(observer, streams: streams, to: sinks[to], into: &series) {
            starts.append(monotonicNanos())
            control.send(#""op":"update","accessory":"\#(address)","placement":"\#(to == 1 ? "on-head" : "off-head")""#)
        }
        try control.readLine()
        if (index + 1) % OwnSpans.readEvery == 0 || index == count - 1 {
            spans += DaemonSpan.parse(status: try control.request(#""op":"status""#))
        }
    }
    // The last switch's echo can reach the daemon after WirePlumber has moved the streams
    // (status is answered between inputs): asked again, briefly, once nothing is measured. A
    // daemon without the stamps (an older build) has none to wait for.
    if let last = starts.last, !spans.isEmpty {
        for _ in 0..<50 where !spans.contains(where: { $0.read >= last }) {
            try await Task.sleep(for: .milliseconds(2))  // polling after the measurement, not synchronising it
            spans += DaemonSpan.parse(status: try control.request(#""op":"status""#))
        }
    }
    return (series, OwnSpans(starts: starts, spans: spans))
}

func node(_ observer: PipeWireConnection, _ name: String) throws -> ObjectID {
    guard let id = observer.snapshot().node(named: name)?.id else { throw BenchError("no node \(name)") }
    return id
}

func writeConfig(_ sandbox: PipeWireSandbox) throws {
    let directory = sandbox.configDir.appendingPathComponent("earshot")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try "[timing]\noff-grace-ms = 0\n".write(to: directory.appendingPathComponent("earshot.toml"), atomically: true, encoding: .utf8)
}

/// The config of the start-up runs: the bench's, plus a rule that makes the headphones the
/// policy's choice at start (rule priority ranks above the user's last choice), so the
/// decision a starting daemon applies is recognisably its own, not WirePlumber's pick.
func writeStartConfig(_ sandbox: PipeWireSandbox) throws -> String {
    let path = sandbox.root.appendingPathComponent("earshot-start.toml").path
    try "[timing]\noff-grace-ms = 0\n\n[[rule]]\nmatch = { \"node.name\" = \"\(headphones)\" }\npriority = 1000\n"
        .write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Start → first decision: `runs` times, with PipeWire (and WirePlumber when cooperative) up,
/// spawn `earshot daemon` with the start-up config and a state directory of its own (no
/// registrations: nothing rules the headphones out). A start changes nothing (docs/policy.md §5:
/// the default found, configured or the session manager's own, holds), so cooperative, with
/// WirePlumber playing its own choice, the daemon writes nothing: timed is spawn → `status`
/// answering with the first decision. Standalone, no links (the streams wait for a session
/// manager): the daemon links every stream to the headphones, stamped in the observer callback
/// that sees it. Between runs the daemon is stopped; cooperative, the key is cleared again and
/// WirePlumber left to settle; standalone, its links go with it.
func startRuns(
    _ name: String, _ sandbox: PipeWireSandbox, _ options: Options, streams: [ObjectID: Int], sinks: [ObjectID], cooperative: Bool
) async throws -> Series {
    let observer = sandbox.observer!
    let config = try writeStartConfig(sandbox)
    let state = sandbox.root.appendingPathComponent("start-state").path
    var series = Series(name: name)
    for run in 0..<options.startRuns {
        if cooperative {
            try await observer.setMetadata(key: Graph.configuredSinkKey, value: nil)
            _ = try await observer.waitUntil("WirePlumber settled on its own default", timeout: .seconds(20)) { graph in
                guard graph.configuredDefaultSinkName == nil, let name = graph.effectiveDefaultSinkName,
                    let sink = graph.node(named: name)?.id
                else { return false }
                return streams.allSatisfy { stream, ports in
                    let links = graph.outgoingLinks(of: stream)
                    return links.count == ports && links.allSatisfy { $0.inputNode == sink }
                }
            }
        }
        if !cooperative, observer.snapshot().configuredDefaultSinkName != nil || observer.snapshot().effectiveDefaultSinkName != nil {
            // A `default` metadata left by the daemon before: no default in it, configured or
            // effective (either would be the default found, held at start: §5).
            try await observer.setMetadata(key: Graph.configuredSinkKey, value: nil)
            try await observer.setMetadata(key: Graph.effectiveSinkKey, value: nil)
            _ = try await observer.waitUntil("defaults cleared") { $0.configuredDefaultSinkName == nil && $0.effectiveDefaultSinkName == nil }
        }
        let probe = StampProbe()
        if cooperative {
            // A start changes nothing (docs/policy.md §5): with WirePlumber playing its own choice
            // the daemon writes nothing, so what is timed is spawn → `status` answering with the
            // first decision (what a login script asking right away sees).
            let start = monotonicNanos()
            let daemon = try sandbox.spawn(
                "earshot-daemon-start", [options.earshot, "daemon", "--config", config], extraEnvironment: ["XDG_STATE_HOME": state])
            let socket = sandbox.runtimeDir.appendingPathComponent("earshot/control").path
            try sandbox.waitForFile(socket, createdBy: daemon)
            let control = try ControlLine(path: socket)
            var decided: UInt64?
            let deadline = monotonicNanos() + 20_000_000_000
            while decided == nil, monotonicNanos() < deadline {
                // Asked again at once: the daemon answers between inputs, the first graph comes
                // within milliseconds (a bench harness, not the product's way of waiting).
                if try !control.request(#""op":"status""#).contains(#""decision":null"#) { decided = monotonicNanos() }
            }
            daemon.stop()
            guard let decided else { throw BenchError("\(name) run \(run): no decision within 20 s\n\(daemon.logTail())") }
            series.millis.append(Double(decided - start) / 1e6)
            continue
        }
        let linked = routed(streams: streams, target: sinks[1], probe: SwitchProbe())
        let wait = try observer.arm("start-up decision linked", stamped(probe) { linked($0) })
        let start = monotonicNanos()
        let daemon = try sandbox.spawn(
            "earshot-daemon-start", [options.earshot, "daemon", "--config", config], extraEnvironment: ["XDG_STATE_HOME": state])
        do {
            _ = try await wait.value(timeout: .seconds(20))
        } catch {
            daemon.stop()
            let graph = observer.snapshot()
            throw BenchError(
                "\(name) run \(run): no decision applied: \(error); configured \(graph.configuredDefaultSinkName ?? "-"), links "
                    + streams.keys.map { "\($0) → \(graph.outgoingLinks(of: $0).map(\.inputNode))" }.joined(separator: ", ")
                    + "\n\(daemon.logTail())")
        }
        guard let done = probe.at, done >= start else { throw BenchError("\(name): applied without a timestamp after the spawn") }
        series.millis.append(Double(done - start) / 1e6)
        daemon.stop()
        // Its links go with its connection.
        _ = try await observer.waitUntil("the daemon's links gone", timeout: .seconds(20)) { graph in
            !graph.links.values.contains { streams[$0.outputNode] != nil }
        }
    }
    return series
}

func startDaemon(_ sandbox: PipeWireSandbox, _ options: Options) throws -> (ChildProcess, ControlLine) {
    let process = try sandbox.spawn("earshot-daemon", [options.earshot, "daemon"])
    let socket = sandbox.runtimeDir.appendingPathComponent("earshot/control").path
    try sandbox.waitForFile(socket, createdBy: process)
    let control = try ControlLine(path: socket)
    _ = try control.request(#""op":"register","accessory":"\#(address)","reporter":"org.earshot.bench","capabilities":["audio-switching","placement"],"placement":"off-head""#)
    return (process, control)
}

func startStreams(_ sandbox: PipeWireSandbox, count: Int) async throws -> [ObjectID] {
    var ids: [ObjectID] = []
    for index in 0..<count { ids.append(try await sandbox.startTone(name: "tone\(index)").stream.id) }
    return ids
}

/// Waits until every stream has output ports, and returns the count per stream.
func portCounts(_ observer: PipeWireConnection, _ streams: [ObjectID]) async throws -> [ObjectID: Int] {
    let graph = try await observer.waitUntil("ports on every stream", timeout: .seconds(30)) { graph in
        // The silence is stereo: both ports (they are announced one at a time).
        streams.allSatisfy { graph.ports(of: $0, direction: .output).count >= 2 }
    }
    return Dictionary(uniqueKeysWithValues: streams.map { ($0, graph.ports(of: $0, direction: .output).count) })
}

func idleTicks(_ pid: pid_t, seconds: Int) async throws -> Int {
    guard let before = cpuTicks(of: pid) else { return -1 }
    try await Task.sleep(for: .seconds(seconds))  // the idle window's deadline: measuring, not synchronising
    guard let after = cpuTicks(of: pid) else { return -1 }
    return after - before
}

struct CaseResult {
    var streams: Int
    var series: [String: Series] = [:]
    var rss: [String: Int] = [:]
    var idleTicks: [String: Int] = [:]
    /// Spawn → request received: `earshot accessory update` at the stand-in socket, and
    /// `wpctl set-default` at PipeWire (seen by the observer), in ms.
    var clientStart: [String: Series] = [:]
    /// Spawn of `earshot daemon` → its first decision applied, in ms.
    var daemonStart: [String: Series] = [:]
    /// Earshot's own span of each placement switch, by path (A-coop, A-solo).
    var own: [String: OwnSpans] = [:]
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "leak":
        try await runLeak(CommandLine.arguments.dropFirst(2))
        exit(0)
    case "leak-table":
        try runLeakTable(CommandLine.arguments.dropFirst(2))
        exit(0)
    default:
        break
    }
    let options = try Options(CommandLine.arguments)
    guard FileManager.default.isExecutableFile(atPath: options.earshot) else { throw BenchError("no earshot binary at \(options.earshot) (--earshot PATH)") }
    var results: [CaseResult] = []
    for (index, count) in options.streams.enumerated() {
        var result = CaseResult(streams: count)
        let idle = index == 0 && options.idleSeconds > 0
        try await cooperative(options, streams: count, idle: idle, into: &result)
        try await standalone(options, streams: count, idle: idle, into: &result)
        results.append(result)
    }
    let (text, json) = report(results)
    print(text)
    if let path = options.json {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
    }
} catch {
    FileHandle.standardError.write(Data("earshot-bench: \(error)\n".utf8))
    exit(1)
}
