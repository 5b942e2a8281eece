import AudioGraph
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// PulseAudio clients in a sandbox: `pipewire-pulse` (PipeWire's PulseAudio server, Debian's
/// package of that name) and `paplay`, a player with no MPRIS.
extension PipeWireSandbox {
    /// Where pipewire-pulse listens: `$XDG_RUNTIME_DIR/pulse/native`.
    public var pulseSocketPath: String { runtimeDir.appendingPathComponent("pulse/native").path }

    /// The running pipewire-pulse of this sandbox.
    public var pulseProcess: ChildProcess? { runningProcess(named: "pipewire-pulse") }

    /// Starts `pipewire-pulse` (on the PATH: the system's, or the PipeWire 1.4 prefix's with
    /// scripts/lib/stack.sh's environment; a symlink to `pipewire`, which then reads
    /// `pipewire-pulse.conf` from the same config dir as the daemon), names its socket in
    /// `PULSE_SERVER` for every child started afterwards, and returns once `pactl info`
    /// is answered. `Options.pulse` calls it after the sinks and sources are made (its
    /// `module-always-sink` adds a dummy sink only when there is none). Stopped by PID.
    @discardableResult
    public func startPulse(timeout: Duration = .seconds(20)) async throws -> ChildProcess {
        let pulse = try spawn("pipewire-pulse", ["pipewire-pulse"])
        guard await Readiness.waitForFile(pulseSocketPath, orExitOf: pulse, timeout: timeout) else {
            throw FixtureError("pipewire-pulse did not create \(pulseSocketPath) (exit status \(pulse.exitStatus.map(String.init) ?? "running"))\n\(pulse.logTail())")
        }
        environment["PULSE_SERVER"] = "unix:\(pulseSocketPath)"
        // The socket file is bound an instant before it listens; a client refused in between
        // tries again (a backoff, not a synchronisation: the answer is the readiness).
        let deadline = ContinuousClock.now + timeout
        while true {
            let answer = try run(["pactl", "info"], timeout: timeout)
            if answer.status == 0 { return pulse }
            guard ContinuousClock.now < deadline, !pulse.hasExited else {
                throw FixtureError("pactl info failed (\(answer.status)) against \(pulseSocketPath): \(answer.output)\n\(pulse.logTail())")
            }
            try await Task.sleep(for: .milliseconds(10))  // retry backoff until pipewire-pulse listens
        }
    }

    /// Starts `paplay` (pulseaudio-utils) through pipewire-pulse: a PulseAudio player with no
    /// MPRIS, playing the sandbox's silence file (about 93 minutes: endless for a test, ≈ no
    /// CPU, one steady stream node). Waits for its playback stream node with its output ports
    /// (linked to a sink when `linked` — that needs WirePlumber). Its application.name is `name`.
    public func startPulsePlayer(name: String = "paplay", linked: Bool = true, timeout: Duration = .seconds(30)) async throws -> (process: ChildProcess, stream: Node) {
        guard environment["PULSE_SERVER"] != nil else { throw FixtureError("start the sandbox with pulse: true (or call startPulse()) before a PulseAudio player") }
        let file = try silenceFile()
        let player = try spawn(name, ["paplay", "--client-name=\(name)", "--stream-name=\(name)", "--property=media.role=music", file])
        let pid = String(player.pid)
        let isPlayers = { @Sendable (graph: Graph, stream: Node) -> Bool in
            (stream.props["application.process.id"] ?? graph.clients[stream.clientID ?? 0]?.props["application.process.id"]) == pid
        }
        let graph = try await observer.waitUntil("\(name)'s playback stream\(linked ? " linked to a sink" : " with its ports")", timeout: timeout) { graph in
            graph.playbackStreams.contains { stream in
                isPlayers(graph, stream) && !graph.ports(of: stream.id, direction: .output).isEmpty
                    && (!linked || !graph.linkedTargets(of: stream.id).isEmpty)
            }
        }
        return (player, graph.playbackStreams.first { isPlayers(graph, $0) }!)
    }

    /// The last process of that name that still runs.
    func runningProcess(named name: String) -> ChildProcess? {
        allProcesses().last { $0.name == name && !$0.hasExited }
    }
}
