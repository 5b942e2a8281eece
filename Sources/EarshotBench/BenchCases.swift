import AudioGraph
import Foundation
import SystemBridge
import PipeWireTestSupport
#if canImport(Glibc)
import Glibc
#endif

// The two cases the bench runs per stream count: with WirePlumber (cooperative) and without
// it (standalone), each into the stream count's `CaseResult`.

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
