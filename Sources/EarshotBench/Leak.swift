import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

// earshot-bench leak [--runs 5] [--kinds mpv,pw-cat,paplay,firefox,chromium] [--configs default,leave,nothing]
//                    [--cases off-head,other-host] [--threshold 0.01] [--after-ms 2000] [--json FILE] [--earshot PATH]
// earshot-bench leak-table FILE...
//
// Audio leaked on the speakers when a worn headset leaves (issue 38, docs/policy.md §7): in a
// private PipeWire with WirePlumber and pipewire-pulse, a player plays on the virtual headphones
// (registered on the head, primary source this host) while `parec` records both sinks' monitors;
// the headset is taken off (`update placement off-head`) or taken by another host (`update
// primary-source` another address), and what reached the speakers is counted: the 10 ms windows
// whose peak is above the threshold, from the update until `--after-ms` of the speakers' recording
// after the daemon's route change. Per player kind, per case, per config — Earshot's defaults,
// `hold-unpausable = "leave"` (pauses only) and nothing (no pause, no hold: WirePlumber alone
// moves the stream) — interleaved run by run in the same sandbox, with the real `earshot daemon`.

let leakThisHost = "11:22:33:44:55:66"
let leakOtherHost = "22:33:44:55:66:77"

enum LeakKind: String, CaseIterable, Sendable, Codable {
    case mpv
    case pwCat = "pw-cat"
    case paplay
    case firefox
    case chromium

    var what: String {
        switch self {
        case .mpv: "mpv (native, MPRIS)"
        case .pwCat: "pw-cat (native, no MPRIS)"
        case .paplay: "paplay (pulse, no MPRIS)"
        case .firefox: "firefox-esr (pulse, MPRIS)"
        case .chromium: "chromium (pulse, MPRIS)"
        }
    }
}

enum LeakCase: String, CaseIterable, Sendable, Codable {
    case offHead = "off-head"
    case otherHost = "other-host"

    /// The update that takes the headset away, and the one that gives it back.
    var away: String { self == .offHead ? #""placement":"off-head""# : #""primary-source":"\#(leakOtherHost)""# }
    var back: String { self == .offHead ? #""placement":"on-head""# : #""primary-source":"\#(leakThisHost)""# }
}

enum LeakConfig: String, CaseIterable, Sendable, Codable {
    /// Earshot's defaults: pause the MPRIS players, mute what no pause stopped.
    case `default`
    /// `hold-unpausable = "leave"`: pauses only (Earshot before the hold).
    case leave
    /// No pause and no hold: the stream moves to the speakers and plays on (WirePlumber alone).
    case nothing
    /// An experiment, not run unless asked for: Earshot's defaults, and the bench itself mutes the
    /// player's streams (their node's Props, as the daemon's hold does) before it sends the
    /// update, and unmutes them after the measurement: what a hold of every stream still
    /// running, paused or not, would leave to be heard.
    case mutedFirst = "muted-first"

    /// The configs run unless --configs says otherwise.
    static let standard: [LeakConfig] = [.default, .leave, .nothing]

    var toml: String {
        var text = "host-addresses = [\"\(leakThisHost)\"]\n\n[timing]\noff-grace-ms = 0\n"
        switch self {
        case .default, .mutedFirst: break
        case .leave: text += "\n[playback]\nhold-unpausable = \"leave\"\n"
        case .nothing: text += "\n[playback]\npause-when-removed = false\npause-when-other-host = false\nhold-unpausable = \"leave\"\n"
        }
        return text
    }
}

struct LeakOptions {
    var runs = 5
    var kinds = LeakKind.allCases
    var configs = LeakConfig.standard
    var cases = LeakCase.allCases
    var threshold = 0.01
    var afterMillis = 2000
    var json: String?
    var earshot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("earshot").path

    static let usage =
        "usage: earshot-bench leak [--runs N] [--kinds mpv,pw-cat,paplay,firefox,chromium] [--configs default,leave,nothing,muted-first] [--cases off-head,other-host] [--threshold FRACTION] [--after-ms MS] [--json FILE] [--earshot PATH]"

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        func list<T: RawRepresentable>(_ value: String, _: T.Type) throws -> [T] where T.RawValue == String {
            try value.split(separator: ",").map { name in
                guard let item = T(rawValue: String(name)) else { throw BenchError("unknown \(T.self) \(name)\n\(Self.usage)") }
                return item
            }
        }
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value\n\(Self.usage)") }
            switch flag {
            case "--runs": runs = Int(value) ?? runs
            case "--kinds": kinds = try list(value, LeakKind.self)
            case "--configs": configs = try list(value, LeakConfig.self)
            case "--cases": cases = try list(value, LeakCase.self)
            case "--threshold": threshold = Double(value) ?? threshold
            case "--after-ms": afterMillis = Int(value) ?? afterMillis
            case "--json": json = value
            case "--earshot": earshot = value
            default: throw BenchError("unknown option \(flag)\n\(Self.usage)")
            }
        }
    }

    /// The threshold as an s16 peak: a window is audible when its peak is above it.
    var peakThreshold: Int32 { Int32((threshold * 32767).rounded(.down)) }
}

/// One measurement.
struct LeakRun: Codable {
    var kind: LeakKind
    var `case`: LeakCase
    var config: LeakConfig
    var run: Int
    /// Audible 10 ms windows on the speakers, in ms.
    var leakedMillis: Int
    /// From the update's send (CLOCK_MONOTONIC) to: the first and last audible window's arrival
    /// on the speakers (parec's read; ≈ 10–20 ms after the sound), the route-change event read,
    /// the player's stream seen linked to the speakers, the last audible window on the headphones.
    var firstLeakMillis: Double?
    var lastLeakMillis: Double?
    var routeMillis: Double
    var movedMillis: Double?
    var headphonesLastMillis: Double?
    /// The daemon's playback events of the switch (`paused`/`held`, reason, how many).
    var actions: [String]
}

struct LeakStackResult: Codable {
    var stack: String
    var pipewire: String
    var wirePlumber: String
    var started: String
    var loadStart: String
    var loadEnd: String
    var threshold: Double
    var afterMillis: Int
    var earshot: String
    var runs: [LeakRun]
    /// MPRIS Pause by hand, no daemon (LeakDrain.swift), per MPRIS player and run.
    var drains: [DrainRun]
}

/// A player of the tone and how to find its streams.
struct LeakPlayer: Sendable {
    var kind: LeakKind
    var owns: @Sendable (Graph, Node) -> Bool
    var stop: @Sendable () -> Void
    /// Whether a process is the player's MPRIS owner (nil: it has no MPRIS).
    var ownsMPRIS: (@Sendable (Int32) -> Bool)?
}

/// A running `earshot daemon` with one config: a control connection that registered the
/// headset, and a subscription.
final class LeakDaemon {
    let process: ChildProcess
    let control: ControlLine
    let events: ControlLine

    init(_ sandbox: PipeWireSandbox, _ options: LeakOptions, config: LeakConfig, label: String) async throws {
        let path = sandbox.root.appendingPathComponent("earshot-leak-\(config).toml").path
        try config.toml.write(toFile: path, atomically: true, encoding: .utf8)
        let socket = sandbox.runtimeDir.appendingPathComponent("earshot/control").path
        // A socket file left by the daemon before would satisfy the wait below at once.
        unlink(socket)
        process = try sandbox.spawn("earshot-daemon-\(label)", [options.earshot, "daemon", "--config", path])
        try sandbox.waitForFile(socket, createdBy: process)
        control = try Self.connect(socket, process)
        events = try Self.connect(socket, process)
        _ = try events.request(#""op":"subscribe""#)
        _ = try control.request(
            #""op":"register","accessory":"\#(address)","reporter":"org.earshot.bench","capabilities":["audio-switching","placement"],"placement":"on-head","primary-source":"\#(leakThisHost)""#
        )
    }

    /// The socket is bound an instant before it listens: a refused connect is tried again
    /// while the daemon runs (a backoff, not a synchronisation), up to 10 s.
    private static func connect(_ socket: String, _ process: ChildProcess) throws -> ControlLine {
        let deadline = monotonicNanos() + 10_000_000_000
        while true {
            do {
                return try ControlLine(path: socket)
            } catch {
                guard !process.hasExited, monotonicNanos() < deadline else { throw BenchError("cannot connect to \(socket): \(error)\n\(process.logTail())") }
                usleep(5000)
            }
        }
    }

    /// The next event (an object), or nil at `deadline`.
    func nextEvent(until deadline: UInt64) throws -> [String: Any]? {
        while let line = try events.readLine(until: deadline) {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] != nil { return object }
        }
        return nil
    }

    func stop() { process.stop() }
}

/// A 440 Hz tone at a quarter of full scale, mono 16-bit 48 kHz, `seconds` long (one second
/// holds 440 whole periods: the repeats join without a click). For the players without MPRIS,
/// which cannot loop: 30 minutes outlast a kind's runs.
func writeToneFile(_ path: String, seconds: Int) throws {
    let rate = 48_000
    var second = Data(capacity: rate * 2)
    for frame in 0..<rate {
        let sample = Int16((0.25 * 32767 * sin(2 * Double.pi * 440 * Double(frame) / Double(rate))).rounded())
        withUnsafeBytes(of: sample.littleEndian) { second.append(contentsOf: $0) }
    }
    var header = Data("RIFF".utf8)
    func le32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
    func le16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
    let dataBytes = UInt32(second.count * seconds)
    le32(36 + dataBytes)
    header.append(contentsOf: Array("WAVEfmt ".utf8))
    le32(16); le16(1); le16(1); le32(UInt32(rate)); le32(UInt32(rate * 2)); le16(2); le16(16)
    header.append(contentsOf: Array("data".utf8))
    le32(dataBytes)
    guard FileManager.default.createFile(atPath: path, contents: header), let file = FileHandle(forWritingAtPath: path) else {
        throw BenchError("cannot write \(path)")
    }
    defer { try? file.close() }
    try file.seekToEnd()
    for _ in 0..<seconds { try file.write(contentsOf: second) }
}

func startLeakPlayer(_ kind: LeakKind, in sandbox: PipeWireSandbox) async throws -> LeakPlayer {
    let byProcess = { @Sendable (pid: pid_t) -> @Sendable (Graph, Node) -> Bool in
        { graph, stream in Browser.processID(of: stream, in: graph) == pid }
    }
    func startTonePlayer(_ name: String, _ arguments: [String]) async throws -> LeakPlayer {
        let tone = sandbox.root.appendingPathComponent("tone-30min.wav").path
        if !FileManager.default.fileExists(atPath: tone) { try writeToneFile(tone, seconds: 1800) }
        let process = try sandbox.spawn(name, arguments + [tone])
        let owns = byProcess(process.pid)
        _ = try await sandbox.observer.waitUntil("\(name)'s playback stream linked", timeout: .seconds(30)) { graph in
            graph.playbackStreams.contains { owns(graph, $0) && !graph.outgoingLinks(of: $0.id).isEmpty }
        }
        return LeakPlayer(kind: kind, owns: owns, stop: { process.stop() })
    }
    switch kind {
    case .mpv:
        let (process, _) = try await sandbox.startPlayer(name: "mpv")
        let pid = process.pid
        return LeakPlayer(kind: kind, owns: byProcess(pid), stop: { process.stop() }, ownsMPRIS: { $0 == pid })
    case .pwCat:
        return try await startTonePlayer("pw-cat-tone", ["pw-cat", "--playback", "--media-role", "Music", "-P", "{ node.name = bench-tone }"])
    case .paplay:
        return try await startTonePlayer(
            "paplay-tone", ["paplay", "--client-name=bench-tone", "--stream-name=bench-tone", "--property=media.role=music"])
    case .firefox, .chromium:
        let browser = try await Browser.start(kind == .firefox ? .firefox : .chromium, in: sandbox)
        do {
            try await browser.waitForStream()
            _ = try await browser.waitForMPRISName()
            try await browser.waitForPlaybackStatus("Playing")
        } catch {
            browser.stop()
            throw error
        }
        let group = browser.process.pid
        return LeakPlayer(
            kind: kind,
            owns: { graph, stream in Browser.processID(of: stream, in: graph).flatMap { ProcessTable.entry($0)?.group } == group },
            stop: { browser.stop() }, ownsMPRIS: { ProcessTable.entry($0)?.group == group })
    }
}

/// One kind's sandbox: both recorders, the player, and the sinks' ids.
struct LeakBench {
    let sandbox: PipeWireSandbox
    let options: LeakOptions
    let player: LeakPlayer
    let speakers: MonitorRecorder
    let headphones: MonitorRecorder
    let speakersID: ObjectID
    let headphonesID: ObjectID

    /// 200 ms of steady state before a switch: the tone heard on the headphones, nothing on
    /// the speakers.
    static let settleWindows = 20

    /// Waits until every stream of the player plays to the headphones only, the tone is heard
    /// there and the speakers are silent (the state before taking the headset away).
    func waitPlayingOnHeadphones() async throws {
        let owns = player.owns
        let target = headphonesID
        _ = try await sandbox.observer.waitUntil("\(player.kind) playing on the headphones only", timeout: .seconds(60)) { graph in
            let streams = graph.playbackStreams.filter { owns(graph, $0) }
            return !streams.isEmpty
                && streams.allSatisfy { stream in
                    let links = graph.outgoingLinks(of: stream.id)
                    return !links.isEmpty && links.allSatisfy { $0.inputNode == target }
                }
        }
        let threshold = options.peakThreshold
        let settle = Self.settleWindows
        let headphonesMark = headphones.count
        let speakersMark = speakers.count
        try headphones.wait("\(player.kind) heard on the headphones", timeout: .seconds(60)) { peaks in
            peaks.count - headphonesMark >= settle && peaks.suffix(settle).allSatisfy { $0 > threshold }
        }
        do {
            try speakers.wait("the speakers silent", timeout: .seconds(30)) { peaks in
                peaks.count - speakersMark >= settle && peaks.suffix(settle).allSatisfy { $0 <= threshold }
            }
        } catch {
            throw BenchError("\(error)\n\(links())")
        }
    }

    /// Every link, by node name and state (for a failure's report).
    func links() -> String {
        let graph = sandbox.observer.snapshot()
        func name(_ id: ObjectID) -> String { graph.nodes[id].map { "\($0.name ?? "?")#\(id)(\($0.state?.rawValue ?? "?"))" } ?? "#\(id)" }
        return "links: " + Set(graph.links.values.map { "\(name($0.outputNode)) → \(name($0.inputNode))" }).sorted().joined(separator: ", ")
    }

    /// Mutes or unmutes every stream of the player that is not so already (the muted-first
    /// experiment); returns those it changed, once the graph shows each done.
    func setPlayerMute(_ mute: Bool) async throws -> [ObjectID] {
        let observer = sandbox.observer!
        let graph = observer.snapshot()
        let streams = graph.playbackStreams.filter { player.owns(graph, $0) && ($0.mute ?? false) != mute }.map(\.id)
        for stream in streams { try await observer.setMute(mute, ofNode: stream) }
        return streams
    }

    func measure(_ daemon: LeakDaemon, config: LeakConfig, case leakCase: LeakCase, run: Int) async throws -> LeakRun {
        try await waitPlayingOnHeadphones()
        while try daemon.nextEvent(until: 0) != nil {}
        let owns = player.owns
        let target = speakersID
        let moved = StampProbe()
        let movedWait = try sandbox.observer.arm(
            "\(player.kind) linked to the speakers",
            stamped(moved) { graph in
                graph.playbackStreams.contains { owns(graph, $0) && graph.outgoingLinks(of: $0.id).contains { $0.inputNode == target } }
            })
        let mutedByBench = config == .mutedFirst ? try await setPlayerMute(true) : []
        let speakersStart = speakers.count
        let headphonesStart = headphones.count
        let start = monotonicNanos()
        _ = try daemon.control.request(#""op":"update","accessory":"\#(address)",\#(leakCase.away)"#)
        var actions: [String] = []
        func note(_ event: [String: Any]) {
            guard event["event"] as? String == "playback" else { return }
            let players = (event["players"] as? [Any])?.count ?? 0
            let streams = (event["streams"] as? [Any])?.count ?? 0
            actions.append("\(event["action"] as? String ?? "?") (\(event["reason"] as? String ?? "?"), \(players) players, \(streams) streams)")
        }
        var routed: UInt64?
        while routed == nil {
            guard let event = try daemon.nextEvent(until: start + 20_000_000_000) else {
                throw BenchError("\(player.kind) \(leakCase) \(config): no route change to the speakers within 20 s\n\(daemon.process.logTail())")
            }
            note(event)
            if event["event"] as? String == "route-change", event["direction"] as? String == "output", event["current"] as? String == speakers.sink {
                routed = monotonicNanos()
            }
        }
        let routeWindow = speakers.count
        let after = options.afterMillis / MonitorRecorder.windowMillis
        try speakers.wait("\(options.afterMillis) ms recorded after the switch", timeout: .seconds(30)) { $0.count >= routeWindow + after }
        _ = try? await movedWait.value(timeout: .seconds(5))
        while let event = try daemon.nextEvent(until: 0) { note(event) }
        let threshold = options.peakThreshold
        let loud = speakers.windows(speakersStart..<(routeWindow + after)).filter { $0.peak > threshold }
        let heard = headphones.windows(headphonesStart..<headphones.count).last { $0.peak > threshold }
        func millis(_ at: UInt64?) -> Double? { at.map { Double(Int64(bitPattern: $0 &- start)) / 1e6 } }
        let result = LeakRun(
            kind: player.kind, case: leakCase, config: config, run: run, leakedMillis: loud.count * MonitorRecorder.windowMillis,
            firstLeakMillis: millis(loud.first?.arrival), lastLeakMillis: millis(loud.last?.arrival), routeMillis: millis(routed) ?? .nan,
            movedMillis: millis(moved.at), headphonesLastMillis: millis(heard?.arrival), actions: actions)
        if !mutedByBench.isEmpty { _ = try await setPlayerMute(false) }
        _ = try daemon.control.request(#""op":"update","accessory":"\#(address)",\#(leakCase.back)"#)
        return result
    }
}

func leakKind(_ kind: LeakKind, _ options: LeakOptions) async throws -> (runs: [LeakRun], drains: [DrainRun]) {
    try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()], pulse: true)) { sandbox in
        let observer = sandbox.observer!
        let speakersRecorder = try MonitorRecorder(sandbox, sink: speakers, label: "speakers")
        let headphonesRecorder = try MonitorRecorder(sandbox, sink: headphones, label: "headphones")
        defer {
            speakersRecorder.stop()
            headphonesRecorder.stop()
        }
        let player = try await startLeakPlayer(kind, in: sandbox)
        defer { player.stop() }
        let started = observer.snapshot()
        for stream in started.playbackStreams where player.owns(started, stream) {
            let keys = stream.props.keys.filter { $0.hasPrefix("pulse.attr.") || ["node.name", "node.latency", "media.name"].contains($0) }
            log("\(kind.rawValue) stream \(stream.id): " + keys.sorted().map { "\($0)=\(stream.props[$0] ?? "")" }.joined(separator: " "))
        }
        let bench = LeakBench(
            sandbox: sandbox, options: options, player: player, speakers: speakersRecorder, headphones: headphonesRecorder,
            speakersID: try node(observer, speakers), headphonesID: try node(observer, headphones))
        // Found after the first run's daemons have paused the player through it (mpv takes its
        // name a moment after its stream appears).
        var probe: MPRISProbe?
        defer { probe?.close() }
        var runs: [LeakRun] = []
        var drains: [DrainRun] = []
        for run in 1...options.runs {
            for config in options.configs {
                log("\(kind.rawValue): run \(run), \(config.rawValue)")
                let daemon = try await LeakDaemon(sandbox, options, config: config, label: "\(config)-\(run)")
                defer { daemon.stop() }
                for leakCase in options.cases {
                    let result = try await bench.measure(daemon, config: config, case: leakCase, run: run)
                    log("  \(leakCase.rawValue): \(result.leakedMillis) ms leaked; \(result.actions.joined(separator: "; "))")
                    runs.append(result)
                }
                // The return given back in full (resumed, unmuted) before this daemon stops.
                try await bench.waitPlayingOnHeadphones()
            }
            // No daemon now: the player paused by hand, on the headphones.
            if let ownsMPRIS = player.ownsMPRIS {
                if probe == nil { probe = try await MPRISProbe.find(sandbox, owns: ownsMPRIS) }
                guard let probe else { continue }
                let drain = try await bench.drain(probe, run: run)
                log("  Pause by hand: Paused after \(drain.pausedMillis.map { String(format: "%.0f", $0) } ?? "-") ms, last audible after \(drain.lastAudibleMillis.map { String(format: "%.0f", $0) } ?? "-") ms")
                drains.append(drain)
            }
        }
        return (runs, drains)
    }
}

func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}

/// `pipewire --version` and `wireplumber --version`: the versions linked.
func stackVersions() -> (pipewire: String, wirePlumber: String) {
    func linked(_ program: String) -> String {
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program, "--version"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "?" }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").first { $0.hasPrefix("Linked with") }.map { String($0.split(separator: " ").last ?? "?") } ?? "?"
    }
    return (linked("pipewire"), linked("wireplumber"))
}

func runLeak(_ arguments: ArraySlice<String>) async throws {
    let options = try LeakOptions(arguments)
    guard FileManager.default.isExecutableFile(atPath: options.earshot) else { throw BenchError("no earshot binary at \(options.earshot) (--earshot PATH)") }
    let versions = stackVersions()
    let formatter = ISO8601DateFormatter()
    var result = LeakStackResult(
        stack: "PipeWire \(versions.pipewire) + WirePlumber \(versions.wirePlumber)", pipewire: versions.pipewire,
        wirePlumber: versions.wirePlumber, started: formatter.string(from: Date()), loadStart: loadAverage(), loadEnd: "",
        threshold: options.threshold, afterMillis: options.afterMillis, earshot: options.earshot, runs: [], drains: [])
    log("leak on \(result.stack), load \(result.loadStart)")
    for kind in options.kinds {
        let (runs, drains) = try await leakKind(kind, options)
        result.runs += runs
        result.drains += drains
    }
    result.loadEnd = loadAverage()
    if let path = options.json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(result).write(to: URL(fileURLWithPath: path))
    }
    print(leakTable([result]))
}

func runLeakTable(_ paths: ArraySlice<String>) throws {
    guard !paths.isEmpty else { throw BenchError("usage: earshot-bench leak-table FILE...") }
    let results = try paths.map { try JSONDecoder().decode(LeakStackResult.self, from: Data(contentsOf: URL(fileURLWithPath: $0))) }
    print(leakTable(results))
}

func median(_ values: [Int]) -> Int? {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return nil }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The table: per kind and case, per stack, each config's median leak (and range), and the
/// default's share of the baseline's (nothing) measured in the same run.
func leakTable(_ results: [LeakStackResult]) -> String {
    guard let first = results.first else { return "" }
    var lines: [String] = []
    lines.append(
        "Audio leaked on the speakers after the headset left: ms of 10 ms windows with a peak above \(String(format: "%g", first.threshold * 100)) % of full scale"
            + " (s16 \(Int32((first.threshold * 32767).rounded(.down)))),"
    )
    lines.append("from the update until \(first.afterMillis) ms of the speakers' recording after the route change; median [min–max] of the runs.")
    lines.append("default: Earshot's defaults; leave: hold-unpausable = \"leave\" (pauses only); nothing: no pause, no hold (WirePlumber moves the stream).")
    for result in results {
        lines.append("  \(result.stack): started \(result.started), load \(result.loadStart) → \(result.loadEnd), \(result.runs.count) measurements")
    }
    let kinds = LeakKind.allCases.filter { kind in results.contains { $0.runs.contains { $0.kind == kind } } }
    let configs = LeakConfig.allCases.filter { config in results.contains { $0.runs.contains { $0.config == config } } }
    let cases = LeakCase.allCases.filter { leakCase in results.contains { $0.runs.contains { $0.case == leakCase } } }
    func cell(_ runs: [LeakRun]) -> String {
        guard let middle = median(runs.map(\.leakedMillis)), let low = runs.map(\.leakedMillis).min(), let high = runs.map(\.leakedMillis).max() else {
            return "-"
        }
        return low == high ? "\(middle)" : "\(middle) [\(low)–\(high)]"
    }
    let width = 18
    var header = "kind      case        "
    for result in results {
        header += "| " + result.stack.padding(toLength: width * configs.count + 16, withPad: " ", startingAt: 0)
    }
    lines.append(header)
    var subheader = "                      "
    for _ in results {
        subheader += "| " + configs.map { $0.rawValue.padding(toLength: width, withPad: " ", startingAt: 0) }.joined() + "default/nothing "
    }
    lines.append(subheader)
    for kind in kinds {
        for leakCase in cases {
            var line = kind.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + leakCase.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            for result in results {
                line += "| "
                var medians: [LeakConfig: Int] = [:]
                for config in configs {
                    let runs = result.runs.filter { $0.kind == kind && $0.case == leakCase && $0.config == config }
                    medians[config] = median(runs.map(\.leakedMillis))
                    line += cell(runs).padding(toLength: width, withPad: " ", startingAt: 0)
                }
                if let value = medians[.default], let base = medians[.nothing], base > 0 {
                    line += String(format: "%.1f %%", 100 * Double(value) / Double(base)).padding(toLength: 16, withPad: " ", startingAt: 0)
                } else {
                    line += "-".padding(toLength: 16, withPad: " ", startingAt: 0)
                }
            }
            lines.append(line)
        }
    }
    // MPRIS Pause alone: how long the audio goes on after the player says Paused.
    let drainKinds = kinds.filter { kind in results.contains { $0.drains.contains { $0.kind == kind } } }
    if !drainKinds.isEmpty {
        lines.append("")
        lines.append("MPRIS Pause by hand, no daemon, on the headphones: ms after the call (median [min–max]) of its reply, of PlaybackStatus Paused,")
        lines.append("of the last audible window read from the headphones' monitor, and the audio heard after Paused (last audible − Paused):")
        func stat(_ values: [Double]) -> String {
            let sorted = values.filter { !$0.isNaN }.sorted()
            guard let low = sorted.first, let high = sorted.last else { return "-" }
            let middle = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            return String(format: "%.0f [%.0f–%.0f]", middle, low, high)
        }
        for result in results {
            for kind in drainKinds {
                let drains = result.drains.filter { $0.kind == kind }
                guard !drains.isEmpty else { continue }
                let after = drains.compactMap { drain in drain.lastAudibleMillis.flatMap { last in drain.pausedMillis.map { last - $0 } } }
                lines.append(
                    "  \(result.stack) \(kind.rawValue): reply \(stat(drains.map(\.replyMillis))), Paused \(stat(drains.compactMap(\.pausedMillis))), "
                        + "last audible \(stat(drains.compactMap(\.lastAudibleMillis))), after Paused \(stat(after))")
            }
        }
    }
    // Where the defaults leaked: each run's timing, to say why.
    let leaks = results.flatMap { result in result.runs.filter { $0.config == .default && $0.leakedMillis > 0 }.map { (result.stack, $0) } }
    if !leaks.isEmpty {
        lines.append("")
        lines.append("runs with the defaults that leaked (ms after the update was sent: route-change event read, player's stream linked to the speakers,")
        lines.append("first and last audible window read from the speakers' monitor, last audible window read from the headphones' monitor):")
        func ms(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "-" }
        for (stack, run) in leaks {
            lines.append(
                "  \(stack) \(run.kind.rawValue) \(run.case.rawValue) run \(run.run): \(run.leakedMillis) ms; route \(ms(run.routeMillis)), moved \(ms(run.movedMillis)), "
                    + "speakers \(ms(run.firstLeakMillis))–\(ms(run.lastLeakMillis)), headphones last \(ms(run.headphonesLastMillis)); \(run.actions.joined(separator: "; "))"
            )
        }
    }
    return lines.joined(separator: "\n")
}
