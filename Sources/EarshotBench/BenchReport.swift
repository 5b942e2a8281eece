import AudioGraph
import Foundation
import SystemBridge
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

// The results as the table the bench prints and the JSON it writes (--json).

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
