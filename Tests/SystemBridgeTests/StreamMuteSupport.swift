import AudioGraph
import Foundation
import PipeWireTestSupport
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

/// What the mute tests need around a sandbox: an audible tone, pipewire-pulse, a meter on a
/// sink's monitor and pactl's view of a stream.
extension PipeWireSandbox {
    /// A 90 s WAV file of a 480 Hz tone at amplitude 8000 (of 32767), made once per sandbox:
    /// unlike `silenceFile`, what it plays can be heard at the sink.
    func toneFile() throws -> String {
        let path = root.appendingPathComponent("tone.wav").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let frames = 48000 * 90
        var header = Data("RIFF".utf8)
        func le32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        func le16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        le32(UInt32(frames * 4 + 36))
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(2); le32(48000); le32(48000 * 4); le16(4); le16(16)
        header.append(contentsOf: Array("data".utf8))
        le32(UInt32(frames * 4))
        // One period is 100 frames at 48 kHz; both channels alike.
        var period = Data()
        for index in 0..<100 {
            let sample = Int16(8000 * sin(2 * Double.pi * Double(index) / 100))
            for _ in 0..<2 { withUnsafeBytes(of: sample.littleEndian) { period.append(contentsOf: $0) } }
        }
        var file = header
        file.reserveCapacity(header.count + frames * 4)
        for _ in 0..<(frames / 100) { file.append(period) }
        guard FileManager.default.createFile(atPath: path, contents: file) else { throw FixtureError("cannot write \(path)") }
        return path
    }

    /// Starts pipewire-pulse in this sandbox (the fixture has no option for it here) and waits
    /// until `pactl info` answers. The 1.4 stack (scripts/lib/stack.sh) has no pipewire-pulse
    /// package: its `pipewire` runs Debian's pipewire-pulse.conf from a config dir of its own
    /// (with `PIPEWIRE_CONFIG_DIR` set, PipeWire 1.4 reads only that directory).
    func startPulseServer() throws {
        let server: ChildProcess
        if let stackConfig = environment["PIPEWIRE_CONFIG_DIR"] {
            let files = FileManager.default
            let ownConfig = root.appendingPathComponent("pulse-config")
            try files.copyItem(at: URL(fileURLWithPath: stackConfig), to: ownConfig)
            let conf = ownConfig.appendingPathComponent("pipewire-pulse.conf")
            if !files.fileExists(atPath: conf.path) {
                try files.copyItem(at: URL(fileURLWithPath: "/usr/share/pipewire/pipewire-pulse.conf"), to: conf)
            }
            server = try spawn(
                "pipewire-pulse", ["pipewire", "-c", "pipewire-pulse.conf"], extraEnvironment: ["PIPEWIRE_CONFIG_DIR": ownConfig.path])
        } else {
            server = try spawn("pipewire-pulse", ["pipewire-pulse"])
        }
        try waitForFile(runtimeDir.appendingPathComponent("pulse/native").path, createdBy: server)
        // The socket exists an instant before the server listens: ask until it answers (each
        // try is a whole pactl run, the backoff).
        let deadline = ContinuousClock.now + .seconds(20)
        while try run(["pactl", "info"]).status != 0 {
            guard ContinuousClock.now < deadline, !server.hasExited else { throw FixtureError("pipewire-pulse does not answer pactl info") }
        }
    }

    /// Starts `arguments` (a player of `toneFile()`) and waits until the graph shows its
    /// playback stream with ports, known by the player's pid (on the node, as pipewire-pulse
    /// gives it, or on its client).
    func startPlayback(_ name: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> (process: ChildProcess, stream: Node) {
        let process = try spawn(name, arguments)
        let pid = String(process.pid)
        @Sendable func isPlayer(_ stream: Node, _ graph: Graph) -> Bool {
            stream.props["application.process.id"] == pid || graph.clients[stream.clientID ?? 0]?.props["application.process.id"] == pid
        }
        let graph = try await observer.waitUntil("\(name)'s playback stream with its ports", timeout: timeout) { graph in
            graph.playbackStreams.contains { isPlayer($0, graph) && !graph.ports(of: $0.id, direction: .output).isEmpty }
        }
        return (process, graph.playbackStreams.first { isPlayer($0, graph) }!)
    }

    /// pactl's view of the sink input of node `id`: its index and whether it says `Mute: yes`.
    func sinkInput(ofNode id: ObjectID) throws -> (index: String, muted: Bool)? {
        let listing = try run(["pactl", "list", "sink-inputs"])
        guard listing.status == 0 else { throw FixtureError("pactl list sink-inputs failed (\(listing.status))") }
        for block in listing.output.components(separatedBy: "Sink Input #").dropFirst() {
            guard block.contains("object.id = \"\(id)\"") else { continue }
            let index = String(block.prefix { $0.isNumber })
            return (index, block.contains("Mute: yes"))
        }
        return nil
    }
}

/// The loudness of what reaches a sink, read from its monitor: `pw-record` with
/// `stream.capture.sink` (what a listener would hear), as 10 ms peaks stamped with the
/// `MonotonicClock` time they were read.
final class SinkMeter: @unchecked Sendable {
    enum Sound: CustomStringConvertible {
        /// Every peak at most 64 (of 32767): nothing plays.
        case silent
        /// Every peak at least 2000 (the tone's is 8000).
        case audible

        func holds(for peak: Int) -> Bool { self == .silent ? peak <= 64 : peak >= 2000 }
        var description: String { self == .silent ? "silence" : "the tone" }
    }

    private let condition = NSCondition()
    private var peaks: [(time: UInt64, peak: Int)] = []
    private var ended = false
    private let sink: String
    private let recorder: ChildProcess

    init(_ sandbox: PipeWireSandbox, sink: String) throws {
        self.sink = sink
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        do {
            recorder = try sandbox.spawn(
                "pw-record-\(sink)",
                ["pw-record", "-P", "{ stream.capture.sink = true }", "--target", sink, "--format", "s16", "--rate", "48000", "--channels", "2", "-"],
                stdoutFD: writeEnd)
        } catch {
            close(readEnd)
            close(writeEnd)
            throw error
        }
        close(writeEnd)
        // Reads until pw-record ends (the sandbox stops it), so it never blocks on a full pipe.
        let thread = Thread { [self] in
            let chunk = 480 * 4
            var buffer = [UInt8](repeating: 0, count: chunk)
            var filled = 0
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress! + filled, chunk - filled) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                filled += count
                guard filled == chunk else { continue }
                filled = 0
                var peak = 0
                buffer.withUnsafeBytes { raw in
                    for sample in raw.bindMemory(to: Int16.self) { peak = max(peak, abs(Int(Int16(littleEndian: sample)))) }
                }
                condition.withLock {
                    peaks.append((MonotonicClock.nanoseconds(), peak))
                    condition.broadcast()
                }
            }
            close(readEnd)
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
        thread.start()
    }

    /// Stops pw-record (its capture stream goes); what was read stays.
    func stop() { recorder.stop() }

    /// The loudest peak read between two `MonotonicClock` times (0 when none was read).
    func loudest(after start: UInt64, before end: UInt64) -> Int {
        condition.withLock { peaks.filter { $0.time > start && $0.time < end }.map(\.peak).max() ?? 0 }
    }

    /// Waits until `sound` has reached the sink without a break for `lasting`, in what was read
    /// after `after` (a `MonotonicClock` time); returns when that run began. Throws at the deadline.
    @discardableResult
    func wait(for sound: Sound, lasting: Duration = .milliseconds(300), after: UInt64, timeout: Duration = .seconds(20)) throws -> UInt64 {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18)
        let chunks = Int(lasting.components.seconds * 100) + Int(lasting.components.attoseconds / 10_000_000_000_000_000)
        condition.lock()
        defer { condition.unlock() }
        var scanned = 0
        var runStart: Int?
        while true {
            while scanned < peaks.count {
                let (time, peak) = peaks[scanned]
                if time > after, sound.holds(for: peak) {
                    if runStart == nil { runStart = scanned }
                    if scanned - runStart! + 1 >= chunks { return peaks[runStart!].time }
                } else {
                    runStart = nil
                }
                scanned += 1
            }
            guard !ended else { throw FixtureError("pw-record on \(sink) ended before \(sound) was heard for \(lasting)") }
            guard condition.wait(until: deadline) || scanned < peaks.count else {
                let recent = peaks.suffix(20).map { String($0.peak) }.joined(separator: " ")
                throw FixtureError("\(sound) did not reach \(sink) for \(lasting) within \(timeout) (last peaks: \(recent))")
            }
        }
    }
}
