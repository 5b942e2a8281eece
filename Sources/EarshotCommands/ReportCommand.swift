import ControlProtocol
import ArgumentParser
import AudioGraph
import FoundationEssentials
import SystemBridge

/// `earshot report --accessory X`: a reporter bridge. Placement lines on stdin become updates
/// over one control connection, which survives the daemon restarting.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Forward placement lines from stdin to the daemon (a bridge for scripts and sensors).",
        discussion: """
            Each line is in-ear, on-head, over-the-ear or off-head; blank lines and # comments are \
            ignored, any other line is reported on stderr with its number and skipped. The accessory is \
            registered if it is not already (by this reporter, with these capabilities); every update \
            names the reporter. One connection carries every update; when the daemon goes away (a \
            restart) the reporter reconnects and registers again with the last placement. Exit codes: \
            0 at the end of input, every placement taken; 1 the registration was refused, or the \
            daemon refused a placement (at the end: how many, and the first refusal's message); 2 \
            usage; 3 the daemon stayed unreachable for --timeout while a placement waited.
            """)

    @Option(help: ArgumentHelp("A Bluetooth address (AA:BB:CC:DD:EE:FF) or a node.name.", valueName: "address|node"))
    var accessory: String

    @Option(help: "The reporter's reverse-DNS name.")
    var reporter = "org.earshot.report"

    @Option(help: ArgumentHelp("What the accessory can do, comma-separated; must include placement.", valueName: "list"))
    var capabilities = "audio-switching,placement"

    @Option(help: ArgumentHelp("Seconds a placement may wait for an unreachable daemon before giving up (exit 3).", valueName: "seconds"))
    var timeout: Double = 30

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        try ControlArguments.accessory(accessory)
        guard try ControlArguments.capabilities(capabilities).contains("placement") else {
            throw ValidationError("--capabilities must include placement: reporting placements is what `report` does")
        }
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() throws {
        let path = socket.path ?? ControlSocketPath.default()
        let reporter = PlacementReporter(
            options: .init(
                accessory: accessory, reporter: reporter, capabilities: try ControlArguments.capabilities(capabilities),
                timeout: .milliseconds(Int64(timeout * 1000))),
            connect: { () throws(ControlClientError) -> any ReportLink in try ControlClient.connect(path: path) },
            // The daemon's messages may quote names any client chose: escaped, one line each.
            diagnose: { Console.error("\(TerminalText.escape("earshot report: \($0)"))\n") })
        let code = ReportLoop.run(reporter, input: Readiness.standardInput)
        if code != 0 { throw ExitCode(code) }
    }
}

/// Waits on the input and on the connection, feeding the reporter; returns the exit code.
enum ReportLoop {
    static func run(_ reporter: PlacementReporter, input: Int32) -> Int32 {
        var buffer: [UInt8] = []
        var lineNumber = 0
        var inputOpen = true
        var retryAt: ContinuousClock.Instant? = ContinuousClock.now

        func take(_ line: ArraySlice<UInt8>) {
            lineNumber += 1
            reporter.receive(String(decoding: line, as: UTF8.self), number: lineNumber)
        }

        while true {
            if retryAt.map({ $0 <= .now }) ?? reporter.hasWork {
                switch reporter.flush(inputEnded: !inputOpen) {
                case .stop(let code): return code
                case .retry(let delay): retryAt = .now + delay
                case .idle: retryAt = nil
                }
            }
            if !inputOpen, !reporter.hasWork { return reporter.finish() }
            if !inputOpen, retryAt == nil { return reporter.finish() }

            var descriptors: [Int32] = []
            if inputOpen { descriptors.append(input) }
            let linkFD = retryAt == nil ? reporter.link?.descriptor : nil
            if let linkFD { descriptors.append(linkFD) }
            var timeout: Duration?
            if let retryAt { timeout = max(.zero, ContinuousClock.now.duration(to: retryAt)) }
            let ready: Set<Int32>
            do {
                ready = try Readiness.wait(descriptors, timeout: timeout)
            } catch {
                Console.error("earshot report: \(error)\n")
                return 1
            }
            if inputOpen, ready.contains(input) {
                let chunk: [UInt8]
                do {
                    chunk = try Readiness.read(input, maximum: 4096, what: "stdin")
                } catch where error.errno == .resourceTemporarilyUnavailable {
                    continue
                } catch {
                    Console.error("earshot report: reading stdin: \(error.reason)\n")
                    inputOpen = false
                    chunk = []
                }
                if !inputOpen {
                    // A read error: the input is given up as it is.
                } else if chunk.isEmpty {
                    inputOpen = false
                    if !buffer.isEmpty { take(buffer[...]) }
                    buffer.removeAll()
                } else {
                    buffer.append(contentsOf: chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        take(buffer[..<newline])
                        buffer.removeSubrange(...newline)
                    }
                }
            }
            if let linkFD, ready.contains(linkFD) { reporter.connectionReadable() }
            // New lines (or a dropped connection) are flushed at once, unless a retry is scheduled.
            if retryAt == nil, reporter.hasWork { retryAt = .now }
        }
    }
}
