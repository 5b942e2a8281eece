import AudioGraph
import Foundation
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

/// A private PipeWire (optionally with dbus-daemon and WirePlumber) in a fresh 0700 runtime
/// dir, with its own state and config dirs, for one test. Everything it starts is stopped by
/// PID in `stop()`; `withSandbox` does that and prints the daemons' logs when the body throws.
public final class PipeWireSandbox: @unchecked Sendable {
    public struct Options: Sendable {
        /// Start dbus-daemon and WirePlumber (the cooperative, desktop-like setup).
        public var wirePlumber: Bool
        /// Sinks created before the body runs.
        public var sinks: [VirtualSink]
        /// Microphones, created after the sinks.
        public var sources: [VirtualSource] = []
        /// Start a private session bus even without WirePlumber (MPRIS, Earshot's D-Bus service).
        public var sessionBus: Bool
        /// Start a second private bus and name it in `DBUS_SYSTEM_BUS_ADDRESS` (a stand-in
        /// system bus for an `org.bluez` stand-in).
        public var systemBus: Bool
        /// Start `pipewire-pulse` (after the sinks and sources) and name its socket in
        /// `PULSE_SERVER`: PulseAudio clients (browsers, `paplay`, `pactl`) play into this
        /// sandbox. See `startPulse()`.
        public var pulse: Bool
        public init(
            wirePlumber: Bool = false, sinks: [VirtualSink] = [], sources: [VirtualSource] = [], sessionBus: Bool = false, systemBus: Bool = false,
            pulse: Bool = false
        ) {
            self.wirePlumber = wirePlumber
            self.sinks = sinks
            self.sources = sources
            self.sessionBus = sessionBus
            self.systemBus = systemBus
            self.pulse = pulse
        }
    }

    public let root: URL
    public let runtimeDir: URL
    public let stateDir: URL
    public let configDir: URL
    /// The environment every child gets: isolated XDG dirs, this sandbox's bus, nothing of the
    /// user's session.
    public internal(set) var environment: [String: String]
    /// A connection of the fixture's own, for waiting on the graph.
    public private(set) var observer: PipeWireConnection!
    /// The absolute path of the PipeWire socket; pass it as `remote` to connect in-process
    /// without touching this process's environment.
    public var socketPath: String { runtimeDir.appendingPathComponent("pipewire-0").path }

    private var processes: [ChildProcess] = []
    var hasWirePlumber = false
    /// The Xvfb of `startDisplay()`, once started.
    var display: VirtualDisplay?
    private let lock = NSLock()

    public static func start(_ options: Options = Options()) async throws -> PipeWireSandbox {
        let sandbox = try PipeWireSandbox()
        do {
            try await sandbox.launch(options)
        } catch {
            FileHandle.standardError.write(Data("sandbox failed to start: \(error)\n\(sandbox.logs())\n".utf8))
            sandbox.stop()
            throw error
        }
        return sandbox
    }

    private init() throws {
        var template = Array("/tmp/earshot-sandbox-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        root = URL(fileURLWithPath: String(cString: made))
        runtimeDir = root.appendingPathComponent("runtime")
        stateDir = root.appendingPathComponent("state")
        configDir = root.appendingPathComponent("config")
        let files = FileManager.default
        try files.createDirectory(at: runtimeDir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try files.createDirectory(at: stateDir, withIntermediateDirectories: false)
        try files.createDirectory(at: configDir, withIntermediateDirectories: false)
        var environment = ProcessInfo.processInfo.environment
        for key in ["PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "PULSE_SERVER", "DISPLAY", "WAYLAND_DISPLAY"] {
            environment[key] = nil
        }
        environment["XDG_RUNTIME_DIR"] = runtimeDir.path
        environment["XDG_STATE_HOME"] = stateDir.path
        environment["XDG_CONFIG_HOME"] = configDir.path
        // Never reach the user's session bus; replaced by the sandbox's own when it runs one.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtimeDir.path)/no-bus"
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(runtimeDir.path)/no-system-bus"
        self.environment = environment
    }

    deinit { stop() }

    private func launch(_ options: Options) async throws {
        if !options.wirePlumber {
            // Without a session manager nobody implements the `default` metadata: have the
            // server own one, as a desktop without WirePlumber would need.
            let dropIns = try pipewireDropInDirectory()
            try """
            context.objects = [
                { factory = metadata args = { metadata.name = default } }
            ]
            """.write(to: dropIns.appendingPathComponent("50-earshot-default-metadata.conf"), atomically: true, encoding: .utf8)
        }
        let pipewire = try spawn("pipewire", ["pipewire"])
        guard await Readiness.waitForFile(socketPath, orExitOf: pipewire, timeout: .seconds(20)) else {
            throw FixtureError("pipewire did not create \(socketPath) (exit status \(pipewire.exitStatus.map(String.init) ?? "running"))")
        }
        observer = try await connectWhenListening(pipewire)
        if options.systemBus {
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = try startBus("system-bus", socket: "system_bus_socket").address
        }
        if options.wirePlumber || options.sessionBus {
            environment["DBUS_SESSION_BUS_ADDRESS"] = try startBus("session-bus", socket: "bus").address
        }
        if options.wirePlumber {
            hasWirePlumber = true
            try startWirePlumber()
            _ = try await observer.waitUntil("WirePlumber's default metadata", timeout: .seconds(20)) {
                $0.defaultMetadata != nil
            }
        } else {
            _ = try await observer.waitUntil("the server's default metadata", timeout: .seconds(10)) {
                $0.defaultMetadata != nil
            }
        }
        for sink in options.sinks { try await createSink(sink) }
        for source in options.sources { try await createSource(source) }
        if options.pulse { try await startPulse() }
    }

    /// Where this sandbox's pipewire reads drop-ins. With `PIPEWIRE_CONFIG_DIR` set (the
    /// second stack, scripts/lib/stack.sh) PipeWire 1.4 reads only that directory, so the
    /// sandbox gets a copy of its own to add to; otherwise the XDG config dir's drop-ins.
    private func pipewireDropInDirectory() throws -> URL {
        let files = FileManager.default
        guard let stackConfig = environment["PIPEWIRE_CONFIG_DIR"] else {
            let dropIns = configDir.appendingPathComponent("pipewire/pipewire.conf.d")
            try files.createDirectory(at: dropIns, withIntermediateDirectories: true)
            return dropIns
        }
        let ownConfig = root.appendingPathComponent("pipewire-config")
        try files.copyItem(at: URL(fileURLWithPath: stackConfig), to: ownConfig)
        environment["PIPEWIRE_CONFIG_DIR"] = ownConfig.path
        let dropIns = ownConfig.appendingPathComponent("pipewire.conf.d")
        try files.createDirectory(at: dropIns, withIntermediateDirectories: true)
        return dropIns
    }

    private func startBus(_ name: String, socket: String) throws -> PrivateBus {
        let bus = try PrivateBus(
            name: name, socket: runtimeDir.appendingPathComponent(socket).path, environment: environment,
            logFile: root.appendingPathComponent("\(name).log"))
        lock.withLock { processes.append(bus.process) }
        return bus
    }

    /// Starts a program inside the sandbox; it is stopped with the sandbox (with its whole
    /// process group when `newProcessGroup`: see `ChildProcess.init`).
    @discardableResult
    public func spawn(
        _ name: String, _ arguments: [String], extraEnvironment: [String: String] = [:], stdoutFD: Int32? = nil, stdinFD: Int32? = nil,
        newProcessGroup: Bool = false
    ) throws -> ChildProcess {
        let child = try ChildProcess(
            name: name, arguments: arguments, environment: environment.merging(extraEnvironment) { $1 },
            logFile: root.appendingPathComponent("\(name).log"), stdoutFD: stdoutFD, stdinFD: stdinFD, newProcessGroup: newProcessGroup)
        lock.withLock { processes.append(child) }
        return child
    }

    /// Waits until `path` exists (inotify), failing early if `process` exits first.
    public func waitForFile(_ path: String, createdBy process: ChildProcess, timeout: Duration = .seconds(20)) throws {
        guard Readiness.waitForFile(path, orExitOf: process, timeout: timeout) else {
            throw FixtureError("\(process.name) did not create \(path) (exit status \(process.exitStatus.map(String.init) ?? "running"))\n\(process.logTail())")
        }
    }

    /// Runs a command to completion in the sandbox and returns its exit status and stdout.
    public func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> (status: Int32, output: String) {
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { close(readEnd) }
        let name = URL(fileURLWithPath: arguments[0]).lastPathComponent
        let child = try ChildProcess(
            name: name, arguments: arguments, environment: environment,
            logFile: root.appendingPathComponent("\(name).log"), stdoutFD: writeEnd)
        close(writeEnd)
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, !Readiness.wait(for: [readEnd], timeout: left).isEmpty else {
                child.stop()
                throw FixtureError("\(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        let status = child.waitForExit(timeout: timeout) ?? { child.stop(); return -1 }()
        return (status, String(decoding: output, as: UTF8.self))
    }

    /// Creates a sink and waits until the observer sees it with its ports.
    @discardableResult
    public func createSink(_ sink: VirtualSink) async throws -> Node {
        try await createNullNode(sink.adapterArguments(autoPortConfig: !hasWirePlumber), name: sink.name, ports: .input, count: sink.channels.count)
    }

    /// Creates a null node from its adapter arguments and waits until the observer sees it with
    /// `count` ports of `direction` (a sink's inputs, a source's capture outputs).
    func createNullNode(_ arguments: String, name: String, ports direction: PortDirection, count: Int) async throws -> Node {
        let result = try run(["pw-cli", "create-node", "adapter", arguments])
        guard result.status == 0 else { throw FixtureError("pw-cli create-node failed (\(result.status)): \(result.output)") }
        let graph = try await observer.waitUntil("\(name) with \(count) \(direction.rawValue) ports") { graph in
            guard let node = graph.node(named: name) else { return false }
            return graph.ports(of: node.id, direction: direction).count == count
        }
        return graph.node(named: name)!
    }

    /// Destroys a sink by name and waits until it is gone.
    public func destroySink(named name: String) async throws {
        guard let node = observer.snapshot().node(named: name) else { throw FixtureError("no sink named \(name)") }
        let result = try run(["pw-cli", "destroy", String(node.id)])
        guard result.status == 0 else { throw FixtureError("pw-cli destroy failed (\(result.status)): \(result.output)") }
        _ = try await observer.waitUntil("sink \(name) removed") { $0.node(named: name) == nil }
    }

    /// Starts `mpv` playing an endless 440 Hz tone (with MPRIS when the sandbox has a bus) and
    /// waits for its playback stream to be linked. `target` pins it to a node (target.object).
    public func startPlayer(name: String = "mpv", target: String? = nil) async throws -> (process: ChildProcess, stream: Node) {
        var arguments = [
            "mpv", "--no-config", "--no-video", "--no-terminal", "--ao=pipewire",
            "--audio-client-name=\(name)", "av://lavfi:sine=f=440",
        ]
        if FileManager.default.fileExists(atPath: "/usr/lib/mpv-mpris/mpris.so") {
            arguments.insert("--script=/usr/lib/mpv-mpris/mpris.so", at: 1)
        }
        if let target { arguments.insert("--audio-device=pipewire/\(target)", at: 1) }
        let player = try spawn(name, arguments)
        let pid = String(player.pid)
        let graph = try await observer.waitUntil("\(name)'s playback stream with its ports", timeout: .seconds(20)) { graph in
            graph.playbackStreams.contains { stream in
                graph.clients[stream.clientID ?? 0]?.props["application.process.id"] == pid
                    && !graph.ports(of: stream.id, direction: .output).isEmpty
            }
        }
        let stream = graph.playbackStreams.first { graph.clients[$0.clientID ?? 0]?.props["application.process.id"] == pid }!
        return (player, stream)
    }

    /// Stops every process by PID (newest first), closes the observer and removes the dirs.
    public func stop() {
        observer?.close()
        let running = lock.withLock { () -> [ChildProcess] in
            defer { processes.removeAll() }
            return processes
        }
        for process in running.reversed() { process.stop() }
        // EARSHOT_KEEP_SANDBOX=1 keeps every daemon's whole log for a post-mortem.
        if ProcessInfo.processInfo.environment["EARSHOT_KEEP_SANDBOX"] == "1" {
            print("sandbox kept: \(root.path)")
            return
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Every process started in this sandbox, oldest first (running or not).
    func allProcesses() -> [ChildProcess] { lock.withLock { processes } }

    /// The tail of every daemon's log, for failure reports.
    public func logs(lines: Int = 30) -> String {
        lock.withLock { processes }.map { process in
            "----- \(process.name) (pid \(process.pid), \(process.exitStatus.map { "exited \($0)" } ?? "running")) -----\n\(process.logTail(lines: lines))"
        }.joined(separator: "\n")
    }
}

/// Runs `body` with a fresh sandbox, always stops it, and prints the daemons' logs when the
/// body throws (test failures from `#require` and fixture timeouts throw).
public func withSandbox<Result>(
    _ options: PipeWireSandbox.Options = .init(), _ body: (PipeWireSandbox) async throws -> Result
) async throws -> Result {
    let sandbox = try await PipeWireSandbox.start(options)
    defer { sandbox.stop() }
    do {
        return try await body(sandbox)
    } catch {
        FileHandle.standardError.write(Data("test failed: \(error)\n\(sandbox.logs())\n".utf8))
        throw error
    }
}

extension PipeWireSandbox {
    /// The running pipewire daemon of this sandbox.
    public var pipewireProcess: ChildProcess? {
        lock.withLock { processes.last { $0.name == "pipewire" && !$0.hasExited } }
    }

    /// Kills pipewire with SIGKILL (a crash, not a shutdown) and reaps it.
    public func killPipeWire() throws {
        guard let pipewire = pipewireProcess else { throw FixtureError("pipewire is not running") }
        pipewire.signal(SIGKILL)
        guard pipewire.waitForExit(timeout: .seconds(10)) != nil else { throw FixtureError("pipewire survived SIGKILL") }
    }

    /// The sandbox's running session bus (dbus-daemon), if it has one.
    public var sessionBusProcess: ChildProcess? {
        lock.withLock { processes.last { $0.name == "session-bus" && !$0.hasExited } }
    }

    /// The running WirePlumber of this sandbox.
    public var wirePlumberProcess: ChildProcess? {
        lock.withLock { processes.last { $0.name == "wireplumber" && !$0.hasExited } }
    }

    /// Kills WirePlumber with SIGKILL (a crash) and reaps it; its clients and links go with it.
    public func killWirePlumber() throws {
        guard let wirePlumber = wirePlumberProcess else { throw FixtureError("wireplumber is not running") }
        wirePlumber.signal(SIGKILL)
        guard wirePlumber.waitForExit(timeout: .seconds(10)) != nil else { throw FixtureError("wireplumber survived SIGKILL") }
    }

    /// Starts WirePlumber (again) on this sandbox's bus; returns without waiting for it.
    public func startWirePlumber() throws {
        try writeWirePlumberConfig()
        try spawn("wireplumber", ["wireplumber"])
    }

    /// WirePlumber without its device monitors (ALSA, V4L2, libcamera, BlueZ): the sandbox's
    /// devices are its virtual sinks, the host's stay the host's, and each monitor would hold
    /// an inotify instance, of which a user has 128 machine-wide (many sandboxes at once ran
    /// out). 0.4 reads the Lua files, 0.5 the profile; with `WIREPLUMBER_CONFIG_DIR` set (the
    /// second stack) 0.5 reads only the directories listed there, so this one goes first.
    private func writeWirePlumberConfig() throws {
        let directory = configDir.appendingPathComponent("wireplumber")
        let files: [(String, String)] = [
            ("main.lua.d/51-earshot-sandbox.lua", "alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n"),
            ("bluetooth.lua.d/51-earshot-sandbox.lua", "bluez_monitor.enabled = false\n"),
            ("wireplumber.conf.d/51-earshot-sandbox.conf", """
                wireplumber.profiles = {
                  main = {
                    monitor.alsa = disabled
                    monitor.alsa-midi = disabled
                    monitor.v4l2 = disabled
                    monitor.libcamera = disabled
                    monitor.bluez = disabled
                    monitor.bluez-midi = disabled
                  }
                }

                """),
        ]
        for (path, text) in files {
            let file = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        if let stackConfig = environment["WIREPLUMBER_CONFIG_DIR"], !stackConfig.hasPrefix(directory.path + ":") {
            environment["WIREPLUMBER_CONFIG_DIR"] = directory.path + ":" + stackConfig
        }
    }

    /// Starts pipewire again in the same runtime dir and reconnects the observer.
    public func restartPipeWire() async throws {
        observer?.close()
        try? FileManager.default.removeItem(atPath: socketPath)
        try? FileManager.default.removeItem(atPath: socketPath + ".lock")
        let pipewire = try spawn("pipewire", ["pipewire"])
        guard await Readiness.waitForFile(socketPath, orExitOf: pipewire, timeout: .seconds(20)) else {
            throw FixtureError("restarted pipewire did not create \(socketPath)")
        }
        observer = try await connectWhenListening(pipewire)
    }

    /// pipewire creates its socket file (bind) an instant before it listens; a connect in
    /// between is refused. Retries with a short backoff while pipewire runs, up to 10 s.
    private func connectWhenListening(_ pipewire: ChildProcess) async throws -> PipeWireConnection {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try await PipeWireConnection.connect(remote: socketPath, applicationName: "earshot-test-observer")
            } catch {
                guard case .cannotConnect(_, let code) = error, code == ECONNREFUSED,
                    !pipewire.hasExited, ContinuousClock.now < deadline
                else { throw error }
            }
            try await Task.sleep(for: .milliseconds(5))  // retry backoff until pipewire listens
        }
    }
}
