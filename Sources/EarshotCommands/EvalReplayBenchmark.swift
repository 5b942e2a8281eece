import PolicyEval
import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// `earshot eval --bench-write-replay EVENTS SINKS DIR` (hidden; run by `scripts/bench replay`):
/// writes the day of `ReplayWorkload` as `dump.json` and `events.jsonl`, and two configs that
/// differ in a USB DAC `[[rule]]` (`old.toml`, `new.toml`), for the script to time `eval` and
/// `eval --against` on.
enum EvalReplayBenchmark {
    static func write(events: Int, sinks: Int, to directory: String) throws {
        let workload = ReplayWorkload(sinks: sinks, events: events)
        try FileSystem.createDirectory(directory, permissions: 0o755)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try FileSystem.atomicWrite(encoder.encode(workload.graph), to: "\(directory)/dump.json", permissions: 0o644)
        let script = workload.script.map(\.canonicalText).joined(separator: "\n") + "\n"
        try FileSystem.atomicWrite(Array(script.utf8), to: "\(directory)/events.jsonl", permissions: 0o644)
        try FileSystem.atomicWrite(Array(config(usbPriority: -10).utf8), to: "\(directory)/old.toml", permissions: 0o644)
        try FileSystem.atomicWrite(Array(config(usbPriority: 100).utf8), to: "\(directory)/new.toml", permissions: 0o644)
    }

    private static func config(usbPriority: Int) -> String {
        "[[rule]]\nmatch = { \"device.bus\" = \"usb\" }\npriority = \(usbPriority)\n"
    }
}
