import WireFields
import ControlProtocol
import AudioGraph
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for an ALSA sound card in a sandbox: the `earshot-route-device` program (a real
/// PipeWire client, Sources/earshot-route-device) exports an `Audio/Device` with EnumProfile,
/// Profile, EnumRoute and Route params, and its sink (and source) nodes with `device.id` and
/// `card.profile.device`, the way WirePlumber exports ALSA cards. A test turns a route's
/// availability (headphones plugged in or pulled, a monitor switched off) and the active route;
/// each change returns once a round trip has confirmed the server has it. WirePlumber reacts
/// to it as to a real card: it sets the best route and moves the default off a sink whose
/// active route went `available: no`.
public final class RouteDevice: @unchecked Sendable {
    public enum Availability: String, Sendable, Hashable {
        case yes, no, unknown
    }

    public enum Direction: String, Sendable, Hashable {
        case output, input
    }

    /// An EnumRoute entry (an ALSA port): a jack, the speakers, an HDMI output.
    public struct Route: Sendable, Hashable {
        public var name: String
        public var description: String
        /// The route info's `port.type` (`speaker`, `headphones`, `hdmi`, `mic`, …).
        public var portType: String?
        public var direction: Direction
        public var priority: Int
        public var available: Availability
        /// The `card.profile.device` indexes it serves.
        public var devices: [Int]
        /// The profile indexes it belongs to; nil: every profile but "off".
        public var profiles: [Int]?
        /// More route info (`port.availability-group`, …).
        public var info: [String: String]

        public init(
            name: String, description: String? = nil, portType: String? = nil, direction: Direction = .output,
            priority: Int = 0, available: Availability = .unknown, devices: [Int] = [0], profiles: [Int]? = nil,
            info: [String: String] = [:]
        ) {
            self.name = name
            self.description = description ?? name
            self.portType = portType
            self.direction = direction
            self.priority = priority
            self.available = available
            self.devices = devices
            self.profiles = profiles
            self.info = info
        }

        public static func speaker(available: Availability = .unknown, device: Int = 0) -> Route {
            Route(name: "analog-output-speaker", description: "Speakers", portType: "speaker", priority: 100, available: available, devices: [device])
        }

        public static func headphones(available: Availability, device: Int = 0) -> Route {
            Route(name: "analog-output-headphones", description: "Headphones", portType: "headphones", priority: 200, available: available, devices: [device])
        }

        public static func hdmi(_ number: Int = 0, available: Availability, device: Int) -> Route {
            Route(name: "hdmi-output-\(number)", description: "HDMI / DisplayPort", portType: "hdmi", priority: 300, available: available, devices: [device])
        }

        var argument: String {
            var fields = [
                "name=\(Self.escape(name))", "description=\(Self.escape(description))", "direction=\(direction.rawValue)",
                "priority=\(priority)", "available=\(available.rawValue)", "devices=\(devices.map(String.init).joined(separator: ";"))",
            ]
            if let portType { fields.append("port-type=\(Self.escape(portType))") }
            if let profiles { fields.append("profiles=\(profiles.map(String.init).joined(separator: ";"))") }
            fields += info.sorted { $0.key < $1.key }.map { "info=\(Self.escape($0.key))=\(Self.escape($0.value))" }
            return fields.joined(separator: ",")
        }

        /// The program's SPEC syntax: ',' separates fields, so a comma (and the backslash) in a
        /// value is escaped.
        static func escape(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
        }
    }

    /// A sink or source node of the card, on its own `card.profile.device`.
    public struct Node: Sendable, Hashable {
        public var name: String
        public var description: String
        public var device: Int
        public var isSource: Bool
        public var channels: [String]
        /// More node properties (`device.form-factor`, …). `priority.session` and
        /// `priority.driver` are 1000 for a sink and 2000 for a source unless given here.
        public var properties: [String: String]

        public init(
            name: String, description: String? = nil, device: Int, isSource: Bool = false, channels: [String] = ["FL", "FR"],
            properties: [String: String] = [:]
        ) {
            self.name = name
            self.description = description ?? name
            self.device = device
            self.isSource = isSource
            self.channels = channels
            self.properties = properties
        }

        public static func sink(
            name: String, description: String? = nil, device: Int = 0, channels: [String] = ["FL", "FR"], properties: [String: String] = [:]
        ) -> Node {
            Node(name: name, description: description, device: device, channels: channels, properties: properties)
        }

        public static func source(
            name: String, description: String? = nil, device: Int, channels: [String] = ["FL", "FR"], properties: [String: String] = [:]
        ) -> Node {
            Node(name: name, description: description, device: device, isSource: true, channels: channels, properties: properties)
        }

        var arguments: [String] {
            var fields = [
                "name=\(Route.escape(name))", "description=\(Route.escape(description))", "device=\(device)",
                "channels=\(channels.joined(separator: ";"))",
            ]
            fields += properties.sorted { $0.key < $1.key }.map { "prop=\(Route.escape($0.key))=\(Route.escape($0.value))" }
            return [isSource ? "--source" : "--sink", fields.joined(separator: ",")]
        }
    }

    public struct Configuration: Sendable {
        /// Device properties; the program adds device.name, device.api=alsa, media.class and
        /// device.description when they are missing.
        public var deviceProperties: [String: String]
        public var routes: [Route]
        public var nodes: [Node]
        /// The active route per `card.profile.device` (default: its best route).
        public var active: [Int: String]
        /// More of the program's options (`--profile`, `--current-profile`; see its `--help`).
        public var extraArguments: [String]

        public init(
            deviceProperties: [String: String] = [:], routes: [Route], nodes: [Node], active: [Int: String] = [:],
            extraArguments: [String] = []
        ) {
            self.deviceProperties = deviceProperties
            self.routes = routes
            self.nodes = nodes
            self.active = active
            self.extraArguments = extraArguments
        }

        func arguments(autoPortConfig: Bool) -> [String] {
            var arguments: [String] = autoPortConfig ? ["--auto-port-config"] : []
            arguments += deviceProperties.sorted { $0.key < $1.key }.flatMap { ["--device-prop", "\($0.key)=\($0.value)"] }
            arguments += routes.flatMap { ["--route", $0.argument] }
            arguments += nodes.flatMap(\.arguments)
            arguments += active.sorted { $0.key < $1.key }.flatMap { ["--active", "\($0.key):\($0.value)"] }
            return arguments + extraArguments
        }
    }

    /// The exported device's global id.
    public let deviceID: UInt32
    /// Each node's global id, by `node.name`.
    public let nodeIDs: [String: UInt32]
    public let process: ChildProcess

    private let lock = NSLock()
    private var commandFD: Int32
    private let outputFD: Int32
    private var buffered: [UInt8] = []
    private var busy = false

    /// The built program: `EARSHOT_ROUTE_DEVICE`, else next to the test bundle
    /// (`.build*/debug/earshot-route-device`, as SwiftPM puts every executable of the package).
    public static var executable: URL? {
        if let path = ProcessInfo.processInfo.environment["EARSHOT_ROUTE_DEVICE"] { return URL(fileURLWithPath: path) }
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [argument0, Bundle.main.bundleURL, Bundle.main.executableURL?.deletingLastPathComponent()]
            .compactMap { $0 }
            .flatMap { [$0.appendingPathComponent("earshot-route-device"), $0.deletingLastPathComponent().appendingPathComponent("earshot-route-device")] }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Starts the program in `sandbox` and waits for its `ready` line; with `waitForPorts`, also
    /// until the sandbox's observer sees every node with its ports (configured by WirePlumber,
    /// or by the program itself, `--auto-port-config`, in a sandbox without it). The process
    /// is the sandbox's: it is stopped with it at the latest.
    public static func start(
        in sandbox: PipeWireSandbox, _ configuration: Configuration, name: String = "earshot-route-device",
        waitForPorts: Bool = true, timeout: Duration = .seconds(20)
    ) async throws -> RouteDevice {
        guard let executable else {
            throw FixtureError("earshot-route-device not found next to \(CommandLine.arguments[0]) (swift build --build-tests builds it)")
        }
        // stdin is a socket (sends never raise SIGPIPE in the test process), stdout a pipe.
        var commands: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &commands) == 0 else {
            throw FixtureError("socketpair: \(String(cString: strerror(errno)))")
        }
        let (outputRead, outputWrite) = ChildProcess.makePipe()
        let process: ChildProcess
        do {
            process = try sandbox.spawn(
                name, [executable.path] + configuration.arguments(autoPortConfig: sandbox.wirePlumberProcess == nil),
                stdoutFD: outputWrite, stdinFD: commands[1])
        } catch {
            [commands[0], commands[1], outputRead, outputWrite].forEach { _ = close($0) }
            throw error
        }
        close(commands[1])
        close(outputWrite)
        _ = fcntl(outputRead, F_SETFL, fcntl(outputRead, F_GETFL) | O_NONBLOCK)

        let ready: (device: UInt32, nodes: [String: UInt32])
        var buffered: [UInt8] = []
        do {
            let line = try await Self.readLine(
                from: outputRead, buffer: &buffered, process: process, until: ContinuousClock.now + timeout, what: "its ready line")
            ready = try Self.parseReady(line, process: process)
        } catch {
            close(commands[0])
            close(outputRead)
            process.stop()
            throw error
        }
        let device = RouteDevice(
            deviceID: ready.device, nodeIDs: ready.nodes, process: process, commandFD: commands[0], outputFD: outputRead, buffered: buffered)
        if waitForPorts {
            do {
                for node in configuration.nodes {
                    guard let id = ready.nodes[node.name] else { throw FixtureError("\(name) did not report node \(node.name)") }
                    let direction: PortDirection = node.isSource ? .output : .input
                    let channels = node.channels.count
                    _ = try await sandbox.observer.waitUntil("\(node.name)'s \(channels) \(direction.rawValue) ports", timeout: timeout) { graph in
                        graph.ports(of: id, direction: direction).count >= channels
                    }
                }
            } catch {
                device.stop()
                throw error
            }
        }
        return device
    }

    private init(deviceID: UInt32, nodeIDs: [String: UInt32], process: ChildProcess, commandFD: Int32, outputFD: Int32, buffered: [UInt8]) {
        self.deviceID = deviceID
        self.nodeIDs = nodeIDs
        self.process = process
        self.commandFD = commandFD
        self.outputFD = outputFD
        self.buffered = buffered
    }

    deinit {
        stop()
        close(outputFD)
    }

    // MARK: - Commands

    /// Sets a route's availability (EnumRoute, and Route where it is active); returns once the
    /// server has the change.
    public func setAvailable(route: String, _ availability: Availability, timeout: Duration = .seconds(10)) async throws {
        try await send("available \(route) \(availability.rawValue)", timeout: timeout)
    }

    /// Sets a route's availability as `setAvailable` does, and the program then stops itself
    /// (SIGSTOP) right after its answer, before it reads any request the change causes: a card
    /// whose exporter hangs mid-change. `resume()` lets it go on.
    public func setAvailableThenStop(route: String, _ availability: Availability, timeout: Duration = .seconds(10)) async throws {
        try await send("available \(route) \(availability.rawValue) stop", timeout: timeout)
    }

    /// Stops the program (SIGSTOP): its PipeWire connection stays open and answers nothing.
    public func suspend() { process.signal(SIGSTOP) }

    /// Lets a stopped program go on (SIGCONT).
    public func resume() { process.signal(SIGCONT) }

    /// Makes `route` the active route of `card.profile.device` `device` (as a user picking a
    /// port would); returns once the server has the change.
    public func activate(device: Int, route: String, timeout: Duration = .seconds(10)) async throws {
        try await send("activate \(device) \(route)", timeout: timeout)
    }

    /// The program's own view: `ok profile=I active=DEV:ROUTE,... routes=ROUTE:AVAIL,...`.
    public func show(timeout: Duration = .seconds(10)) async throws -> String {
        try await send("show", timeout: timeout)
    }

    /// Sends one command and returns its `ok` line; an `error` line, an exit or the deadline throws.
    /// One command at a time: answers come in order, and a second caller would take another's.
    @discardableResult
    public func send(_ command: String, timeout: Duration = .seconds(10)) async throws -> String {
        try lock.withLock {
            guard !busy else { throw FixtureError("\(process.name): a command is in flight already; send one at a time") }
            guard commandFD >= 0 else { throw FixtureError("\(process.name) was stopped") }
            busy = true
        }
        defer { lock.withLock { busy = false } }
        try write(command + "\n")
        var buffer = lock.withLock { buffered }
        defer { lock.withLock { buffered = buffer } }
        let line = try await Self.readLine(
            from: outputFD, buffer: &buffer, process: process, until: ContinuousClock.now + timeout, what: "an answer to '\(command)'")
        guard line.hasPrefix("ok") else {
            throw FixtureError("\(process.name): '\(command)' answered '\(line)'\n\(process.logTail())")
        }
        return line
    }

    /// Ends the program (EOF on its stdin: it disconnects and exits 0; SIGTERM, then SIGKILL,
    /// if it has not within a few seconds) and reaps it by PID.
    public func stop() {
        let fd = lock.withLock { () -> Int32 in
            defer { commandFD = -1 }
            return commandFD
        }
        guard fd >= 0 else { return }
        // A stopped program reads neither its stdin nor SIGTERM.
        process.signal(SIGCONT)
        close(fd)
        if process.waitForExit(timeout: .seconds(5)) == nil { process.stop() }
    }

    // MARK: - Lines

    private func write(_ text: String) throws {
        let bytes = Array(text.utf8)
        let fd = lock.withLock { commandFD }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw FixtureError("writing to \(process.name): \(String(cString: strerror(errno)))\n\(process.logTail())")
            }
            offset += written
        }
    }

    /// The next line of the program's stdout, waiting (inotify thread, no polling) until it is
    /// there, the program has closed its output, or `deadline`.
    private static func readLine(
        from fd: Int32, buffer: inout [UInt8], process: ChildProcess, until deadline: ContinuousClock.Instant, what: String
    ) async throws -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let count = read(fd, &chunk, chunk.count)
            if count > 0 {
                buffer += chunk[..<count]
                continue
            }
            if count == 0 {
                let status = process.waitForExit(timeout: .seconds(5)).map(String.init) ?? "running"
                throw FixtureError("\(process.name) ended (exit status \(status)) before \(what)\n\(process.logTail())")
            }
            guard errno == EAGAIN || errno == EINTR else {
                throw FixtureError("reading \(process.name)'s output: \(String(cString: strerror(errno)))")
            }
            guard ContinuousClock.now < deadline else {
                throw FixtureError("\(process.name) gave no \(what) in time\n\(process.logTail())")
            }
            await FileEvents.shared.wait(nil, after: 0, orReadable: fd, until: deadline)
        }
    }

    /// `ready device=<id> <node.name>=<id> ...`
    private static func parseReady(_ line: String, process: ChildProcess) throws -> (device: UInt32, nodes: [String: UInt32]) {
        let words = line.split(separator: " ")
        guard words.first == "ready", words.count >= 2 else {
            throw FixtureError("\(process.name) said '\(line)' instead of its ready line\n\(process.logTail())")
        }
        var device: UInt32?
        var nodes: [String: UInt32] = [:]
        for word in words.dropFirst() {
            guard let equals = word.lastIndex(of: "="), let id = UInt32(word[word.index(after: equals)...]) else {
                throw FixtureError("\(process.name): cannot read '\(word)' in '\(line)'")
            }
            let key = String(word[..<equals])
            if key == "device" && device == nil { device = id } else { nodes[key] = id }
        }
        guard let device else { throw FixtureError("\(process.name): no device id in '\(line)'") }
        return (device, nodes)
    }
}
