import AudioGraph
import Foundation
import SystemBridge
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

// earshot-bench switch [--json FILE] [--streams 1,10,100] [--switches 200] [--cli-switches 200]
//                      [--idle-seconds 30] [--start-runs 20] [--earshot PATH]
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
        guard rest.popFirst() == "switch" else { throw BenchError("usage: earshot-bench switch [--json FILE] [--streams 1,10,100] [--switches N] [--cli-switches N] [--idle-seconds S] [--start-runs N] [--earshot PATH]") }
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

/// WirePlumber running: B, then A-coop, then D (earshot CLI and wpctl).
func cooperative(_ options: Options, streams count: Int, idle: Bool, into result: inout CaseResult) async throws {
    try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
        try writeConfig(sandbox)
        let observer = sandbox.observer!
        let streamIDs = try await startStreams(sandbox, count: count)
        let streams = try await portCounts(observer, streamIDs)
        let sinks = [try node(observer, speakers), try node(observer, headphones)]
        let names = [speakers, headphones]
        // Start on the speakers.
        var warmup = Series(name: "warmup")
        try await measure(observer, streams: streams, to: sinks[0], into: &warmup) {
            try await observer.setMetadata(key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(speakers)"}"#)
        }
        log("\(count) stream(s), WirePlumber: B")
        var b = Series(name: "B")
        for index in 0..<options.switches {
            let to = (index + 1) % 2
            try await measure(observer, streams: streams, to: sinks[to], into: &b) {
                try await observer.setMetadata(key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(names[to])"}"#)
            }
        }
        // Back on the speakers, then Earshot (off-head keeps them there).
        if b.millis.count % 2 == 1 {
            try await measure(observer, streams: streams, to: sinks[0], into: &warmup) {
                try await observer.setMetadata(key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(speakers)"}"#)
            }
        }
        let (daemon, control) = try startDaemon(sandbox, options)
        _ = try await observer.waitUntil("Earshot's first decision applied") { $0.configuredDefaultSinkName == speakers }
        log("\(count) stream(s), WirePlumber: A-coop")
        let (a, ownCoop) = try await placementSwitches("A-coop", observer, streams: streams, sinks: sinks, control: control, count: options.switches)
        result.own["A-coop"] = ownCoop
        if options.cliSwitches > 0 {
            log("\(count) stream(s), WirePlumber: D (earshot accessory update, wpctl set-default)")
            var dEarshot = Series(name: "D-earshot")
            var dWpctl = Series(name: "D-wpctl")
            // A-coop ended on the speakers when the count is even; make sure.
            if a.millis.count % 2 == 1 {
                try await measure(observer, streams: streams, to: sinks[0], into: &warmup) {
                    control.send(#""op":"update","accessory":"\#(address)","placement":"off-head""#)
                }
                try control.readLine()
            }
            // The client's own cost: spawn → its request line at a stand-in socket that passes
            // it on to the daemon (StampingProxy); wpctl's: spawn → its set-default at PipeWire,
            // stamped in the observer's metadata callback (one message later than PipeWire has
            // it). The CLI runs of D go through the stand-in (one extra local hop per switch).
            let proxy = try StampingProxy(
                path: sandbox.runtimeDir.appendingPathComponent("earshot/bench-stand-in").path,
                upstream: sandbox.runtimeDir.appendingPathComponent("earshot/control").path)
            var clientEarshot = Series(name: "earshot")
            var clientWpctl = Series(name: "wpctl")
            for index in 0..<options.cliSwitches {
                let to = (index + 1) % 2
                var spawned: UInt64 = 0
                try await measure(observer, streams: streams, to: sinks[to], into: &dEarshot) {
                    spawned = monotonicNanos()
                    let run = try sandbox.run([
                        options.earshot, "accessory", "update", address, "--placement", to == 1 ? "on-head" : "off-head", "--socket", proxy.path,
                        "--reporter", "org.earshot.bench",
                    ])
                    guard run.status == 0 else { throw BenchError("earshot accessory update: \(run.status) \(run.output)\n\(sandbox.logs())") }
                }
                if let received = proxy.take(), received > spawned { clientEarshot.millis.append(Double(received - spawned) / 1e6) }
            }
            for index in 0..<options.cliSwitches {
                let to = (index + 1 + options.cliSwitches) % 2
                let probe = StampProbe()
                let request = try observer.arm("wpctl's request", stamped(probe) { $0.configuredDefaultSinkName == names[to] })
                var spawned: UInt64 = 0
                try await measure(observer, streams: streams, to: sinks[to], into: &dWpctl) {
                    spawned = monotonicNanos()
                    let run = try sandbox.run(["wpctl", "set-default", String(sinks[to])])
                    guard run.status == 0 else { throw BenchError("wpctl set-default: \(run.status) \(run.output)") }
                }
                _ = try? await request.value(timeout: .seconds(5))
                if let received = probe.at, received > spawned { clientWpctl.millis.append(Double(received - spawned) / 1e6) }
            }
            result.series["D-earshot"] = dEarshot
            result.series["D-wpctl"] = dWpctl
            result.clientStart["earshot"] = clientEarshot
            result.clientStart["wpctl"] = clientWpctl
        }
        result.series["B"] = b
        result.series["A-coop"] = a
        // Settle before RSS and idle CPU: a second after the last switch (a daemon runs for
        // hours; a reading 0.3 s after its start is not its RSS).
        try await Task.sleep(for: .seconds(1))  // measuring, not synchronising
        let graph = observer.snapshot()
        let wirePlumberPID = graph.clients.values.first { $0.props["application.process.binary"] == "wireplumber" }?
            .props["application.process.id"].flatMap { pid_t($0) }
        result.rss["earshot-coop"] = residentKiB(of: daemon.pid)
        if let wirePlumberPID { result.rss["wireplumber"] = residentKiB(of: wirePlumberPID) }
        if idle {
            log("idle CPU of the daemon over \(options.idleSeconds) s (cooperative)")
            result.idleTicks["earshot-coop"] = try await idleTicks(daemon.pid, seconds: options.idleSeconds)
            if let wirePlumberPID { result.idleTicks["wireplumber"] = cpuTicks(of: wirePlumberPID).map { _ in 0 } }
        }
        withExtendedLifetime(control) {}
        if options.startRuns > 0 {
            log("\(count) stream(s), WirePlumber: start → first decision applied")
            daemon.stop()
            result.daemonStart["coop"] = try await startRuns("coop", sandbox, options, streams: streams, sinks: sinks, cooperative: true)
        }
    }
}

/// No session manager: C (raw links by the observer), then A-solo (Earshot links).
func standalone(_ options: Options, streams count: Int, idle: Bool, into result: inout CaseResult) async throws {
    try await withSandbox(.init(wirePlumber: false, sinks: [.speakers(), .headphones()])) { sandbox in
        try writeConfig(sandbox)
        let observer = sandbox.observer!
        let streamIDs = try await startStreams(sandbox, count: count)
        for stream in streamIDs { try await observer.configureDSPPorts(ofNode: stream) }
        let streams = try await portCounts(observer, streamIDs)
        let sinks = [try node(observer, speakers), try node(observer, headphones)]
        // C: the observer's own links, make before break, all requests in flight at once.
        var current: [ObjectID: [ObjectID]] = [:]
        func relink(to target: ObjectID) async throws {
            let made = try await withThrowingTaskGroup(of: (ObjectID, [ObjectID]).self) { group in
                for stream in streamIDs { group.addTask { (stream, try await observer.link(output: stream, input: target)) } }
                var made: [ObjectID: [ObjectID]] = [:]
                for try await (stream, links) in group { made[stream] = links }
                return made
            }
            let old = current.values.flatMap { $0 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for link in old { group.addTask { try await observer.destroy(link) } }
                try await group.waitForAll()
            }
            current = made
        }
        var warmup = Series(name: "warmup")
        try await measure(observer, streams: streams, to: sinks[0], into: &warmup) { try await relink(to: sinks[0]) }
        log("\(count) stream(s), standalone: C")
        var c = Series(name: "C")
        for index in 0..<options.switches {
            let to = (index + 1) % 2
            try await measure(observer, streams: streams, to: sinks[to], into: &c) { try await relink(to: sinks[to]) }
        }
        // Hand the streams to Earshot: the observer's links go, Earshot links them. Armed once
        // they are gone (armed before, the observer's own links satisfied it at once, and the
        // first A-solo switch could start with the streams still unlinked: a "gap").
        for link in current.values.flatMap({ $0 }) { try await observer.destroy(link) }
        let wait = try observer.arm("Earshot linked every stream to the speakers", routed(streams: streams, target: sinks[0], probe: SwitchProbe()))
        let (daemon, control) = try startDaemon(sandbox, options)
        _ = try await wait.value(timeout: .seconds(30))
        log("\(count) stream(s), standalone: A-solo")
        let (a, ownSolo) = try await placementSwitches("A-solo", observer, streams: streams, sinks: sinks, control: control, count: options.switches)
        result.own["A-solo"] = ownSolo
        result.series["C"] = c
        result.series["A-solo"] = a
        try await Task.sleep(for: .seconds(1))  // settle, as in the cooperative case
        result.rss["earshot-solo"] = residentKiB(of: daemon.pid)
        if idle {
            log("idle CPU of the daemon over \(options.idleSeconds) s (standalone)")
            result.idleTicks["earshot-solo"] = try await idleTicks(daemon.pid, seconds: options.idleSeconds)
        }
        withExtendedLifetime(control) {}
        if options.startRuns > 0 {
            log("\(count) stream(s), standalone: start → first decision applied")
            daemon.stop()
            _ = try await observer.waitUntil("the daemon's links gone", timeout: .seconds(20)) { graph in
                !graph.links.values.contains { streams[$0.outputNode] != nil }
            }
            result.daemonStart["solo"] = try await startRuns("solo", sandbox, options, streams: streams, sinks: sinks, cooperative: false)
        }
    }
}

func format(_ value: Double) -> String { value.isNaN ? "-" : String(format: "%.3f", value) }

func report(_ results: [CaseResult]) -> (text: String, json: [String: Any]) {
    var lines: [String] = []
    var cases: [[String: Any]] = []
    var targets: [[String: Any]] = []
    func target(_ streams: Int, _ name: String, _ measured: Double, _ limit: Double, _ unit: String) {
        let met = measured <= limit
        targets.append(["streams": streams, "target": name, "measured": measured, "limit": limit, "unit": unit, "met": met])
        lines.append("  \(met ? "met   " : "MISSED") \(name): \(format(measured)) \(unit) (limit \(format(limit)))")
    }
    for result in results {
        lines.append("")
        lines.append("\(result.streams) stream(s), \(result.series.values.map(\.millis.count).max() ?? 0) switches per path (D: CLI)")
        lines.append("path        p50 ms   p95 ms   p99 ms   max ms  gaps  n")
        for name in ["A-coop", "B", "A-solo", "C", "D-earshot", "D-wpctl"] {
            guard let series = result.series[name] else { continue }
            lines.append(name.padding(toLength: 10, withPad: " ", startingAt: 0)
                + [series.p50, series.p95, series.p99, series.max].map { format($0).leftPadded(9) }.joined()
                + String(series.gaps).leftPadded(6) + " " + String(series.millis.count))
        }
        let dropoutPaths = ["A-coop", "B", "A-solo", "C", "D-earshot", "D-wpctl"].compactMap { result.series[$0] }.filter { !$0.dropouts.isEmpty }
        if !dropoutPaths.isEmpty {
            lines.append("dropout per switch, ms: the longest time one stream had no link at all | no active link (what a listener hears)")
            lines.append("path       nolink p50    p95      max  | silent p50    p95      max  >0/n")
            for series in dropoutPaths {
                let d = series.dropout, h = series.silence
                lines.append(series.name.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + [d.p50, d.p95, d.max].map { format($0).leftPadded(9) }.joined() + "  |"
                    + [h.p50, h.p95, h.max].map { format($0).leftPadded(9) }.joined()
                    + "  \(series.silences.filter { $0 > 0 }.count)/\(series.silences.count)")
            }
        }
        let ownPaths = ["A-coop", "A-solo"].compactMap { name in result.own[name].map { (name, $0) } }.filter { !$0.1.readToSent.millis.isEmpty }
        if !ownPaths.isEmpty {
            lines.append("Earshot's own span (the daemon's CLOCK_MONOTONIC stamps: request line read → configured-default write handed to libpipewire → its echo taken; bench send → read is the socket hop):")
            lines.append("path    span              p50 ms   p90 ms   p95 ms   max ms  n (unmatched)")
            for (name, own) in ownPaths {
                for series in [own.readToSent, own.readToEcho, own.sendToRead] {
                    lines.append(name.padding(toLength: 8, withPad: " ", startingAt: 0) + series.name.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + [series.p50, series.p90, series.p95, series.max].map { format($0).leftPadded(9) }.joined()
                        + "  \(series.millis.count) (\(own.unmatched))")
                }
            }
            if let own = result.own["A-coop"], let a = result.series["A-coop"], let b = result.series["B"], !own.readToEcho.millis.isEmpty {
                lines.append("A-coop p50 − B p50: \(format(a.p50 - b.p50)) ms; of which Earshot's own read → sent p50: \(format(own.readToSent.p50)) ms")
            }
        }
        if let e = result.clientStart["earshot"], let w = result.clientStart["wpctl"] {
            lines.append("client start-up, spawn → request received (earshot: at the stand-in socket; wpctl: its metadata write seen by the observer):")
            lines.append("client      p50 ms   p95 ms   max ms  n")
            for series in [e, w] {
                lines.append(series.name.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + [series.p50, series.p95, series.max].map { format($0).leftPadded(9) }.joined() + " " + String(series.millis.count))
            }
        }
        if !result.daemonStart.isEmpty {
            lines.append("earshot daemon spawn → first decision (coop: status answers with it, a start writing nothing, §5; solo: every stream linked):")
            lines.append("mode        p50 ms   p95 ms   max ms  n")
            for (name, series) in result.daemonStart.sorted(by: { $0.key < $1.key }) {
                lines.append(name.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + [series.p50, series.p95, series.max].map { format($0).leftPadded(9) }.joined() + " " + String(series.millis.count))
            }
        }
        for (name, kib) in result.rss.sorted(by: { $0.key < $1.key }) { lines.append("RSS \(name): \(kib) KiB") }
        for (name, ticks) in result.idleTicks.sorted(by: { $0.key < $1.key }) where name.hasPrefix("earshot") {
            lines.append("idle CPU \(name): \(ticks) ticks")
        }
        lines.append("targets:")
        let s = result.series
        if let a = s["A-coop"], let b = s["B"] { target(result.streams, "A-coop p50 − B p50 ≤ 0.5 ms", a.p50 - b.p50, 0.5, "ms") }
        if let a = s["A-solo"], let b = s["B"] {
            target(result.streams, "A-solo p50 / B p50 ≤ 0.5", a.p50 / b.p50, 0.5, "×")
            target(result.streams, "A-solo p99 / B p99 ≤ 0.5", a.p99 / b.p99, 0.5, "×")
        }
        if let a = s["A-solo"], let c = s["C"] {
            target(result.streams, "A-solo p50 / C p50 ≤ 3", a.p50 / c.p50, 3, "×")
            target(result.streams, "A-solo p99 / C p99 ≤ 3", a.p99 / c.p99, 3, "×")
            target(result.streams, "A-solo gaps = 0", Double(a.gaps), 0, "switches")
        }
        if let a = s["A-solo"], !a.dropouts.isEmpty { target(result.streams, "A-solo dropout (no link) max = 0", a.dropout.max, 0, "ms") }
        if let e = s["D-earshot"], let w = s["D-wpctl"] { target(result.streams, "D earshot p50 / D wpctl p50 ≤ 0.5", e.p50 / w.p50, 0.5, "×") }
        if let e = result.clientStart["earshot"], let w = result.clientStart["wpctl"] {
            target(result.streams, "client start-up earshot p50 / wpctl p50 ≤ 0.5", e.p50 / w.p50, 0.5, "×")
        }
        for (name, series) in result.daemonStart.sorted(by: { $0.key < $1.key }) {
            target(result.streams, "daemon start → first decision (\(name)) p50 ≤ 50 ms", series.p50, 50, "ms")
        }
        if let wp = result.rss["wireplumber"] {
            for key in ["earshot-coop", "earshot-solo"] {
                if let rss = result.rss[key] { target(result.streams, "RSS \(key) / wireplumber ≤ 0.5", Double(rss) / Double(wp), 0.5, "×") }
            }
            for key in ["earshot-coop", "earshot-solo"] {
                if let rss = result.rss[key] { target(result.streams, "RSS \(key) ≤ wireplumber's", Double(rss) / Double(wp), 1, "×") }
            }
        }
        for (name, ticks) in result.idleTicks where name.hasPrefix("earshot") { target(result.streams, "idle ticks \(name) = 0", Double(ticks), 0, "ticks") }
        if result.streams >= 100, let a = s["A-solo"] { target(result.streams, "A-solo p99 ≤ 20 ms with \(result.streams) streams", a.p99, 20, "ms") }
        cases.append([
            "streams": result.streams, "paths": result.series.mapValues(\.json), "rss_kib": result.rss, "idle_ticks": result.idleTicks,
            "client_start_ms": result.clientStart.mapValues(\.json), "daemon_start_ms": result.daemonStart.mapValues(\.json),
            "earshot_own": result.own.filter { !$0.value.readToSent.millis.isEmpty }.mapValues(\.json),
        ])
    }
    let json: [String: Any] = [
        "clock": "CLOCK_MONOTONIC; start before the request, end in the observer's callback completing the switch",
        "earshot_own": "per placement path: the daemon's own stamps (status diagnostics.switch-spans), CLOCK_MONOTONIC: read_to_sent_ms = control request line read → default.configured.audio.sink write handed to libpipewire; read_to_echo_ms = → that write's echo taken by the daemon; bench_send_to_read_ms = the bench's send → the daemon's read",
        "streams": "pw-cat --playback of a sparse WAV of silence, one process per stream",
        "cases": cases, "targets": targets,
    ]
    return (lines.joined(separator: "\n"), json)
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: Swift.max(0, width - count)) + self }
}

do {
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
