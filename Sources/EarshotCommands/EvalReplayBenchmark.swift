import FoundationEssentials
import RoutingPolicy

/// `earshot eval --bench-write-replay EVENTS SINKS DIR` (hidden; run by `scripts/bench replay`):
/// writes the day of `ReplayWorkload` as `dump.json` and `events.jsonl`, and two configs that
/// differ in a USB DAC `[[rule]]` (`old.toml`, `new.toml`), for the script to time `eval` and
/// `eval --against` on.
enum EvalReplayBenchmark {
    static func write(events: Int, sinks: Int, to directory: String) throws {
        let workload = ReplayWorkload(sinks: sinks, events: events)
        let folder = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(workload.graph).write(to: folder.appendingPathComponent("dump.json"))
        let script = workload.script.map(\.canonicalText).joined(separator: "\n") + "\n"
        try Data(script.utf8).write(to: folder.appendingPathComponent("events.jsonl"))
        try Data(config(usbPriority: -10).utf8).write(to: folder.appendingPathComponent("old.toml"))
        try Data(config(usbPriority: 100).utf8).write(to: folder.appendingPathComponent("new.toml"))
    }

    private static func config(usbPriority: Int) -> String {
        "[[rule]]\nmatch = { \"device.bus\" = \"usb\" }\npriority = \(usbPriority)\n"
    }
}
