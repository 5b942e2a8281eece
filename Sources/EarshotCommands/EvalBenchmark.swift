import PolicyEval
import SystemPackage
import ArgumentParser
import FoundationEssentials

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

    /// - Parameter calls: with more than 0, the graph also has that many capture streams (half of
    /// them calls), a laptop microphone and every headset's A2DP-time input, and the workload
    /// is measured twice side by side, with `bluetooth-microphone = "always"` (no call routing)
    /// and `"calls"` (§8), and the ratio is printed: what routing calls costs a decision.
    static func run(sinks: Int, events: Int, runs: Int, noise: Int = 0, calls: Int = 0) -> CommandOutcome {
        guard calls > 0 else { return CommandOutcome(standardOutput: runOne(sinks: sinks, events: events, runs: runs, noise: noise).standardOutput) }
        let always = runOne(sinks: sinks, events: events, runs: runs, noise: noise, calls: calls, rule: .always)
        let routed = runOne(sinks: sinks, events: events, runs: runs, noise: noise, calls: calls, rule: .calls)
        var text = always.standardOutput + routed.standardOutput
        if let a = always.perEvent, let b = routed.perEvent {
            text += "bluetooth-microphone \"calls\" / \"always\": \(Fixed.text(b / a, 2))× the time per event\n"
        }
        return CommandOutcome(standardOutput: text)
    }

    private static func runOne(
        sinks: Int, events: Int, runs: Int, noise: Int, calls: Int = 0, rule: BluetoothMicrophone = .calls
    ) -> (standardOutput: String, perEvent: Double?) {
        let mix = noise > 0 ? " (\(noise) port/link events after each other input)" : ""
        let streams = calls > 0 ? ", \(calls) capture streams (half of them calls), bluetooth-microphone \"\(rule.rawValue)\"" : ""
        var lines = ["eval bench: \(sinks) sinks\(streams), \(events) events\(mix), median of \(max(1, runs)) runs"]
        var full: Measurement?
        for fraction in [4, 2, 1] {
            var workload = BenchmarkWorkload(sinks: sinks, events: max(1, events / fraction), noise: noise, captureStreams: calls)
            workload.config.input.bluetoothMicrophone = rule
            let measurements = (0..<max(1, runs)).map { _ in measure(workload) }.sorted { $0.seconds < $1.seconds }
            let median = measurements[measurements.count / 2]
            lines.append(
                "  \(Fixed.pad(String(median.events), 7)) events: \(Fixed.pad(Fixed.text(median.seconds, 3), 8)) s  "
                    + "\(Fixed.pad(Fixed.text(median.seconds / Double(median.events) * 1e6, 2), 6)) µs/event  (\(median.decisions) decisions)")
            full = median
        }
        if let full {
            lines.append("events/s: \(Fixed.text(Double(full.events) / full.seconds, 0))")
            lines.append("decisions/s: \(Fixed.text(Double(full.decisions) / full.seconds, 0))")
            lines.append("sink-scorings/s: \(Fixed.text(Double(full.scorings) / full.seconds, 0))")
        }
        return (lines.joined(separator: "\n") + "\n", full.map { $0.seconds / Double($0.events) })
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

/// `earshot eval --bench-write-graph N FILE` (hidden; run by `scripts/bench graph`): writes a
/// pw-dump-shaped file with N sinks, each with its device and two ports, carrying `params` as
/// large as real ALSA devices' (formats, routes, profiles: about 17 KB per sink, so 5205 sinks
/// make the 90 MB dump of issue 12).
enum GraphBenchmark {
    static func write(sinks: Int, to path: String) throws {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw ValidationError("cannot write \(path): \(error)")
        }
        defer { try? file.close() }
        func emit(_ text: String) {
            _ = try? file.writeAll(Array(text.utf8))
        }
        let formats = (0..<24).map { n in
            #"{"mediaType":"audio","mediaSubtype":"raw","format":"S\#(16 + n % 3 * 8)LE","rate":\#([44100, 48000, 96000][n % 3]),"channels":2,"position":["FL","FR"]}"#
        }
        let format = formats.joined(separator: ",")
        let portFormats = formats.prefix(4).joined(separator: ",")
        let routes = (0..<12).map { n in
            #"{"index":\#(n),"direction":"Output","name":"analog-output-\#(n)","description":"Route \#(n) with a long human readable description","priority":\#(9000 - n),"available":"unknown","info":["port.type","analog"],"profiles":[1,2,3,4],"props":{"mute":false,"channelVolumes":[0.4,0.4],"volumeBase":1.0,"volumeStep":0.00001,"channelMap":["FL","FR"],"softVolumes":[1.0,1.0]},"save":false,"devices":[0,1]}"#
        }.joined(separator: ",")
        let params = #"{"EnumFormat":[\#(format)],"Format":[\#(formats[0])],"PropInfo":[{"id":"volume","description":"Volume","type":{"default":1.0,"min":0.0,"max":10.0}}],"Props":[{"volume":1.0,"mute":false,"channelVolumes":[1.0,1.0],"channelMap":["FL","FR"],"softMute":false,"softVolumes":[1.0,1.0],"monitorMute":false,"monitorVolumes":[1.0,1.0]}],"EnumRoute":[\#(routes)]}"#
        emit("[\n")
        var id = 100
        for sink in 0..<sinks {
            let device = id, node = id + 1
            let name = "alsa_output.bench-\(sink).analog-stereo"
            emit(#"{"id":\#(device),"type":"PipeWire:Interface:Device","version":3,"permissions":["r","w","x","m"],"info":{"change-mask":["props","params"],"props":{"device.api":"alsa","device.bus":"\#(sink % 7 == 0 ? "usb" : "pci")","device.name":"alsa_card.bench-\#(sink)","device.description":"Bench card \#(sink)","media.class":"Audio/Device","object.id":\#(device)},"params":\#(params)}},"# + "\n")
            emit(#"{"id":\#(node),"type":"PipeWire:Interface:Node","version":3,"permissions":["r","w","x","m"],"info":{"max-input-ports":65,"max-output-ports":65,"change-mask":["input-ports","output-ports","state","props","params"],"n-input-ports":2,"n-output-ports":2,"state":"suspended","error":null,"props":{"node.name":"\#(name)","node.description":"Bench sink \#(sink)","media.class":"Audio/Sink","device.id":\#(device),"object.id":\#(node),"priority.session":\#(1000 + sink % 100),"audio.channels":2,"audio.position":"FL,FR"},"params":\#(params)}},"# + "\n")
            for (offset, channel) in ["FL", "FR"].enumerated() {
                emit(#"{"id":\#(node + 1 + offset),"type":"PipeWire:Interface:Port","version":3,"permissions":["r","w","x","m"],"info":{"direction":"input","change-mask":["props","params"],"props":{"port.name":"playback_\#(channel)","audio.channel":"\#(channel)","node.id":\#(node),"object.id":\#(node + 1 + offset)},"params":{"EnumFormat":[\#(portFormats)]}}},"# + "\n")
            }
            id += 4
        }
        emit(#"{"id":\#(id),"type":"PipeWire:Interface:Metadata","version":3,"permissions":["r","w","x","m"],"props":{"metadata.name":"default"},"metadata":[{"subject":0,"key":"default.configured.audio.sink","type":"Spa:String:JSON","value":{"name":"alsa_output.bench-0.analog-stereo"}}]}"# + "\n]\n")
    }
}

/// Fixed-point numbers for the benchmarks' tables (what `%.Nf` and `%Nd` printed).
enum Fixed {
    /// `value` rounded to `digits` decimals.
    static func text(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled - Double(whole) * scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let decimals = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: max(0, digits - decimals.count)) + decimals
    }

    /// `text` right-aligned in `width` columns.
    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
