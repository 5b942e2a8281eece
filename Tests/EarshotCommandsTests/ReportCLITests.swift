@testable import ControlProtocol
import ControlProtocol
import WireFields
import AudioGraph
@testable import EarshotCommands
import EarshotDaemon
import Foundation
import PipeWireTestSupport
import RoutingPolicy
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `earshot report`: the reporter's logic against a stand-in daemon, then the real binary
/// against a real daemon on a private PipeWire.
@Suite("earshot report: reporter logic", .blockingCalls)
struct PlacementReporterTests {
    @Test("placement lines, blank lines, comments and anything else")
    func parsing() {
        #expect(PlacementReporter.parse("on-head") == .placement(.onHead))
        #expect(PlacementReporter.parse("  in-ear\r") == .placement(.inEar))
        #expect(PlacementReporter.parse("over-the-ear # sensor 2") == .placement(.overTheEar))
        #expect(PlacementReporter.parse("off-head") == .placement(.offHead))
        #expect(PlacementReporter.parse("") == .ignored)
        #expect(PlacementReporter.parse("   ") == .ignored)
        #expect(PlacementReporter.parse("# on-head") == .ignored)
        guard case .invalid(let why) = PlacementReporter.parse("On-Head") else { Issue.record("On-Head accepted"); return }
        #expect(why.contains("\"On-Head\" is not a placement"))
        #expect(why.contains("in-ear, on-head, over-the-ear, off-head"))
    }

    @Test("every line goes over one connection; a bad line is reported with its number and later lines still apply")
    func oneConnection() {
        let daemon = StandInDaemon()
        let (reporter, diagnostics) = daemon.reporter()
        #expect(reporter.flush() == .idle)
        for (number, line) in ["# sensor", "", "on-head", "sideways", "off-head", "in-ear"].enumerated() {
            reporter.receive(line, number: number + 1)
            #expect(reporter.flush() == .idle)
        }
        #expect(daemon.connections == 1)
        #expect(daemon.placements == [nil, "on-head", "off-head", "in-ear"])
        #expect(diagnostics.lines == [#"line 4: "sideways" is not a placement: use one of in-ear, on-head, over-the-ear, off-head"#])
    }

    @Test("the daemon restarts mid-stream: reconnect, register again with the newest placement")
    func restartMidStream() {
        let daemon = StandInDaemon()
        let (reporter, diagnostics) = daemon.reporter()
        reporter.receive("on-head", number: 1)
        #expect(reporter.flush() == .idle)
        daemon.restart(forgetting: true)
        reporter.receive("off-head", number: 2)
        #expect(reporter.flush() == .idle)
        #expect(daemon.connections == 2)
        #expect(daemon.registered == ["AA:BB:CC:DD:EE:FF": "off-head"])
        #expect(diagnostics.lines.contains("registered AA:BB:CC:DD:EE:FF again (off-head)"))
    }

    @Test("the connection closes while idle: the reporter registers again at once with what it last sent")
    func restartWhileIdle() {
        let daemon = StandInDaemon()
        let (reporter, _) = daemon.reporter()
        reporter.receive("in-ear", number: 1)
        #expect(reporter.flush() == .idle)
        daemon.restart(forgetting: true)
        reporter.connectionReadable()
        #expect(reporter.hasWork)
        #expect(reporter.flush() == .idle)
        #expect(daemon.registered == ["AA:BB:CC:DD:EE:FF": "in-ear"])
    }

    @Test("an unknown or invalidated reply registers again and resends", arguments: [AccessoryError.Code.unknown, .invalidated])
    func forgotten(code: AccessoryError.Code) {
        let daemon = StandInDaemon()
        let (reporter, diagnostics) = daemon.reporter()
        reporter.receive("on-head", number: 1)
        #expect(reporter.flush() == .idle)
        daemon.forget(with: code)
        reporter.receive("off-head", number: 2)
        #expect(reporter.flush() == .idle)
        #expect(daemon.connections == 1)
        #expect(daemon.registered == ["AA:BB:CC:DD:EE:FF": "off-head"])
        #expect(diagnostics.lines.contains { $0.hasPrefix("line 2: the daemon no longer has AA:BB:CC:DD:EE:FF (\(code.rawValue))") })
    }

    @Test("a registration of this reporter already there is kept, not cleared")
    func keepsExistingRegistration() {
        let daemon = StandInDaemon()
        daemon.registered["AA:BB:CC:DD:EE:FF"] = "on-head"
        let (reporter, _) = daemon.reporter()
        #expect(reporter.flush() == .idle)
        #expect(daemon.operations == [.current])
        #expect(daemon.registered == ["AA:BB:CC:DD:EE:FF": "on-head"])
    }

    @Test("a registration already there (restored, or a second bridge's) is kept and every update names the reporter")
    func keptRegistrationIsUpdatedByName() {
        let daemon = StandInDaemon()
        daemon.registered["AA:BB:CC:DD:EE:FF"] = "on-head"
        let (reporter, diagnostics) = daemon.reporter()
        // At start, before any line (as `report` flushes): the registration is found and kept.
        #expect(reporter.flush() == .idle)
        for (number, line) in ["off-head", "in-ear"].enumerated() {
            reporter.receive(line, number: number + 1)
            #expect(reporter.flush() == .idle)
        }
        #expect(daemon.operations == [.current, .update, .update], "kept, not registered again")
        #expect(daemon.updateReporters == ["org.earshot.test", "org.earshot.test"])
        #expect(daemon.registered == ["AA:BB:CC:DD:EE:FF": "in-ear"])
        #expect(reporter.finish() == 0)
        #expect(diagnostics.lines.isEmpty, "\(diagnostics.lines)")
    }

    @Test("placements the daemon refuses: each said with its line, and at the end of input exit 1 with the count and the first refusal")
    func refusedLinesExitOne() {
        let daemon = StandInDaemon()
        let (reporter, diagnostics) = daemon.reporter()
        reporter.receive("on-head", number: 1)
        #expect(reporter.flush() == .idle)
        daemon.refuseUpdates = AccessoryError(.accessoryNotCapable, "AA:BB:CC:DD:EE:FF did not declare \"placement\"")
        reporter.receive("off-head", number: 2)
        #expect(reporter.flush() == .idle)
        reporter.receive("# comment", number: 3)
        reporter.receive("in-ear", number: 4)
        #expect(reporter.flush() == .idle, "a refusal does not stop the bridge")
        #expect(reporter.finish() == 1)
        #expect(diagnostics.lines.filter { $0.contains("refused: accessory-not-capable") }.count == 2, "\(diagnostics.lines)")
        #expect(diagnostics.lines.last == #"the daemon refused 2 of 3 placement lines; the first: line 2: accessory-not-capable: AA:BB:CC:DD:EE:FF did not declare "placement""#)
    }

    @Test("a register reply's warnings are said once, not at every registration again")
    func registerWarningsOnce() {
        let daemon = StandInDaemon()
        daemon.registerWarnings = ["no sink is named \"x\" now"]
        let (reporter, diagnostics) = daemon.reporter()
        reporter.receive("on-head", number: 1)
        #expect(reporter.flush() == .idle)
        daemon.restart(forgetting: true)
        reporter.receive("off-head", number: 2)
        #expect(reporter.flush() == .idle)
        #expect(daemon.operations.filter { $0 == .register }.count == 2)
        #expect(diagnostics.lines.filter { $0 == #"warning: no sink is named "x" now"# }.count == 1, "\(diagnostics.lines)")
        #expect(reporter.finish() == 0)
    }

    @Test("an accessory another reporter owns: exit 1")
    func ownedElsewhere() {
        let daemon = StandInDaemon()
        daemon.owner = "org.example.other"
        let (reporter, diagnostics) = daemon.reporter()
        #expect(reporter.flush() == .stop(exitCode: 1))
        #expect(diagnostics.lines.last?.contains("already registered by org.example.other") == true)
    }

    @Test("unreachable: growing retries, and a waiting placement gives up after the timeout (exit 3)")
    func unreachable() {
        let daemon = StandInDaemon()
        daemon.reachable = false
        let clock = ManualInstant()
        let (reporter, diagnostics) = daemon.reporter(timeout: .seconds(1), now: clock.now)
        #expect(reporter.flush() == .retry(after: .milliseconds(50)))
        #expect(reporter.flush() == .retry(after: .milliseconds(100)))
        clock.advance(.seconds(5))
        #expect(reporter.flush() == .retry(after: .milliseconds(200)), "nothing waiting: keeps trying")
        reporter.receive("on-head", number: 1)
        #expect(reporter.flush() == .stop(exitCode: 3))
        #expect(diagnostics.lines.filter { $0.contains("not reachable") }.count == 1, "told once: \(diagnostics.lines)")
    }
}

// MARK: The real binary

@Suite("earshot report: real daemon", .serialized, .timeLimit(.minutes(3)), .blockingCalls)
struct ReportCLITests {
    typealias D = DaemonFixture
    static let sinks: [VirtualSink] = [.speakers(), .headphones()]

    @Test("usage: a bad accessory, capabilities without placement, no --accessory exit 2", arguments: [
        ["report"], ["report", "--accessory", "AA:BB"], ["report", "--accessory", "AA:BB:CC:DD:EE:FF", "--capabilities", "audio-switching"],
        ["report", "--accessory", "AA:BB:CC:DD:EE:FF", "--timeout", "0"],
    ])
    func usage(_ arguments: [String]) throws {
        let result = try EarshotBinary.run(arguments, environment: ["XDG_RUNTIME_DIR": "/nonexistent-earshot-runtime"])
        #expect(result.status == 2, "\(result.standardError)")
    }

    @Test("stdin lines move the output over one connection; a bad line names its number and later lines apply; exit 0 at EOF")
    func linesMoveTheOutput() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            let daemon = try D.start(in: sandbox)
            let (_, mpv) = try await sandbox.startPlayer()
            let input = try ReporterInput(sandbox: sandbox, daemon: daemon)
            defer { input.close() }
            try input.send("# a sensor bridge\n\noff-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            try input.send("sideways\non-head\n")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            try input.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            input.close()
            #expect(input.process.waitForExit(timeout: .seconds(10)) == 0, "\(input.process.logTail())")
            let log = input.process.logTail()
            #expect(log.contains(#"line 4: "sideways" is not a placement"#), "\(log)")
            #expect(!log.contains("again"), "no reconnect expected: \(log)")
            let shown = try JSONValue.parse(try daemon.earshot("accessory", "show", "--json").output)
            guard case .array(let entries)? = shown["accessories"] ?? shown as JSONValue? else { throw FixtureError("no list") }
            #expect(entries.first?["reporter"] == .string("org.earshot.test.report"))
            #expect(entries.first?["placement"] == .string("off-head"))
        }
    }

    @Test("the daemon restarts mid-stream: report reconnects, registers again, and the next line still applies")
    func survivesDaemonRestart() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            var daemon = try D.start(in: sandbox)
            let (_, mpv) = try await sandbox.startPlayer()
            let input = try ReporterInput(sandbox: sandbox, daemon: daemon)
            defer { input.close() }
            // Off first: the headphones are the default before anything is registered.
            try input.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            try input.send("on-head\n")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            try daemon.restart()
            // The reporter notices the closed connection while idle and registers again with on-head.
            try await input.process.waitForLog(containing: "registered \(D.address) again (on-head)")
            try input.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            try daemon.restart()
            try input.send("in-ear\n")  // sent while the daemon may still be starting
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            input.close()
            #expect(input.process.waitForExit(timeout: .seconds(10)) == 0, "\(input.process.logTail())")
            let shown = try JSONValue.parse(try daemon.earshot("accessory", "show", "--json").output)
            guard case .array(let entries)? = shown["accessories"] ?? shown as JSONValue? else { throw FixtureError("no list") }
            #expect(entries.first?["placement"] == .string("in-ear"))
            #expect(entries.first?["stale"] == .bool(false))
        }
    }
}

extension ReportCLITests {
    @Test("a bridge finding its registration restored after a daemon restart (every login after a reboot) keeps it and its lines move the output")
    func restoredRegistrationIsUpdated() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            var daemon = try D.start(in: sandbox)
            let (_, mpv) = try await sandbox.startPlayer()
            let first = try ReporterInput(sandbox: sandbox, daemon: daemon, name: "report-1")
            defer { first.close() }
            try first.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            try first.send("on-head\n")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            first.close()
            #expect(first.process.waitForExit(timeout: .seconds(10)) == 0, "\(first.process.logTail())")

            // The registration is restored (stale, on-head) and the output stays.
            try daemon.restart()
            let second = try ReporterInput(sandbox: sandbox, daemon: daemon, name: "report-2")
            defer { second.close() }
            try second.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            try second.send("in-ear\n")
            try await daemon.waitForRoute(to: D.headphones, streams: [mpv.id])
            second.close()
            #expect(second.process.waitForExit(timeout: .seconds(10)) == 0, "\(second.process.logTail())")
            let log = second.process.logTail()
            #expect(!log.contains("refused"), "\(log)")
            #expect(!log.contains("registered"), "the restored registration is kept: \(log)")
            let shown = try JSONValue.parse(try daemon.earshot("accessory", "show", "--json").output)
            guard case .array(let entries) = shown else { throw FixtureError("no list") }
            #expect(entries.first?["placement"] == .string("in-ear"))
            #expect(entries.first?["stale"] == .bool(false), "confirmed by the bridge's update")
        }
    }

    @Test("placements the daemon refuses: each said with its line, the bridge goes on, and exits 1 at the end with the count and the first refusal")
    func refusedLinesExitOne() async throws {
        try await withSandbox(.init(wirePlumber: false, sinks: Self.sinks)) { sandbox in
            let daemon = try D.start(in: sandbox)
            let (_, mpv) = try await sandbox.startPlayer()
            let input = try ReporterInput(sandbox: sandbox, daemon: daemon)
            defer { input.close() }
            try input.send("off-head\n")
            try await daemon.waitForRoute(to: D.speakers, streams: [mpv.id])
            // The same reporter registers it again without the placement capability.
            let again = try daemon.earshot(
                "accessory", "register", D.address, "--capabilities", "audio-switching", "--reporter", "org.earshot.test.report")
            #expect(again.status == 0, "\(again.output)")
            try input.send("on-head\n")
            try await input.process.waitForLog(containing: "line 2: refused: accessory-not-capable")
            try input.send("in-ear\n")
            try await input.process.waitForLog(containing: "line 3: refused: accessory-not-capable")
            input.close()
            #expect(input.process.waitForExit(timeout: .seconds(10)) == 1, "\(input.process.logTail())")
            let log = input.process.logTail()
            #expect(log.contains("the daemon refused 2 of 3 placement lines; the first: line 2: accessory-not-capable: "), "\(log)")
            let shown = try JSONValue.parse(try daemon.earshot("accessory", "show", "--json").output)
            guard case .array(let entries) = shown else { throw FixtureError("no list") }
            #expect(entries.first?["placement"] == .null, "the refused placements changed nothing")
        }
    }
}

/// `earshot report` running in the sandbox with its stdin on a pipe the test writes to.
final class ReporterInput {
    let process: ChildProcess
    private var writeEnd: Int32

    init(sandbox: PipeWireSandbox, daemon: DaemonFixture, name: String = "report") throws {
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { Glibc.close(readEnd) }
        self.writeEnd = writeEnd
        do {
            process = try sandbox.spawn(
                name, [daemon.binary, "report", "--accessory", DaemonFixture.address, "--reporter", "org.earshot.test.report"],
                stdinFD: readEnd)
        } catch {
            Glibc.close(writeEnd)
            throw error
        }
    }

    deinit { close() }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw FixtureError("writing to report's stdin: \(String(cString: strerror(errno)))\n\(process.logTail())")
            }
            offset += written
        }
    }

    /// End of input: report exits once it has delivered what it read.
    func close() {
        guard writeEnd >= 0 else { return }
        Glibc.close(writeEnd)
        writeEnd = -1
    }
}

// MARK: A stand-in daemon

/// The accessory API's behaviour as far as `report` sees it; connections die on restart.
final class StandInDaemon {
    var reachable = true
    var owner: String?
    var registered: [String: String?] = [:]
    var connections = 0
    var operations: [ControlOperation] = []
    /// Every placement a register or update carried, in order (nil: register without one).
    var placements: [String?] = []
    /// The `reporter` of every update, in order.
    var updateReporters: [String?] = []
    /// Every update is refused with this (after the checks a daemon makes first).
    var refuseUpdates: AccessoryError?
    /// What a register reply warns.
    var registerWarnings: [String] = []
    private var generation = 0
    private var forgottenCode: AccessoryError.Code?

    func restart(forgetting: Bool) {
        generation += 1
        if forgetting { registered.removeAll() }
    }

    func forget(with code: AccessoryError.Code) {
        registered.removeAll()
        forgottenCode = code
    }

    func reporter(timeout: Duration = .seconds(30), now: @escaping () -> ContinuousClock.Instant = { .now })
        -> (PlacementReporter, Diagnostics)
    {
        let diagnostics = Diagnostics()
        let reporter = PlacementReporter(
            options: .init(accessory: "AA:BB:CC:DD:EE:FF", reporter: "org.earshot.test", capabilities: ["audio-switching", "placement"], timeout: timeout),
            connect: { () throws(ControlClientError) -> any ReportLink in
                guard self.reachable else { throw .unreachable(path: "/stand-in", reason: "Connection refused") }
                self.connections += 1
                return Link(daemon: self, generation: self.generation)
            },
            diagnose: { diagnostics.lines.append($0) }, now: now)
        return (reporter, diagnostics)
    }

    final class Diagnostics { var lines: [String] = [] }

    final class Link: ReportLink {
        let daemon: StandInDaemon
        let generation: Int
        init(daemon: StandInDaemon, generation: Int) {
            self.daemon = daemon
            self.generation = generation
        }
        var descriptor: Int32? { nil }
        func stillOpen() -> Bool { daemon.generation == generation }

        private func open(_ operation: ControlOperation) throws(ControlClientError) {
            guard stillOpen() else { throw .lost(path: "/stand-in", reason: "the daemon closed the connection") }
            daemon.operations.append(operation)
        }

        func current(_ accessory: String) throws(ControlClientError) -> Result<ControlWire.AccessoryResult, AccessoryError> {
            try open(.current)
            guard let placement = daemon.registered[accessory] else { return .failure(AccessoryError(.unknown, "no registration for \(accessory)")) }
            return .success(ControlWire.AccessoryResult(
                ControlWire.Accessory(
                    accessory: accessory, configuration: ControlWire.Configuration(capabilities: ["audio-switching", "placement"], placement: placement)),
                reporter: "org.earshot.test"))
        }

        /// A register succeeded on this connection: an update without `reporter` speaks for it.
        private var registeredHere = false

        func register(_ request: ControlWire.RegisterRequest) throws(ControlClientError) -> Result<[String], AccessoryError> {
            try open(.register)
            if let owner = daemon.owner {
                return .failure(AccessoryError(.invalidRequest, "\(request.accessory) is already registered by \(owner): that reporter must unregister it first"))
            }
            daemon.registered[request.accessory] = .some(request.configuration.placement)
            daemon.placements.append(request.configuration.placement)
            registeredHere = true
            return .success(daemon.registerWarnings)
        }

        func update(_ request: ControlWire.UpdateRequest) throws(ControlClientError) -> Result<Void, AccessoryError> {
            try open(.update)
            daemon.updateReporters.append(request.reporter)
            // As the daemon: the connection's last register, else the request's `reporter`.
            guard request.reporter != nil || registeredHere else {
                return .failure(AccessoryError(.invalidRequest, "update needs a reporter: register on this connection first, or give \"reporter\""))
            }
            guard daemon.registered[request.accessory] != nil else {
                return .failure(AccessoryError(daemon.forgottenCode ?? .unknown, "no registration for \(request.accessory)"))
            }
            if let refusal = daemon.refuseUpdates { return .failure(refusal) }
            daemon.registered[request.accessory] = .some(request.placement)
            daemon.placements.append(request.placement)
            return .success(())
        }
    }
}

/// A clock the test moves by hand.
final class ManualInstant: @unchecked Sendable {
    private var current = ContinuousClock.now
    func now() -> ContinuousClock.Instant { current }
    func advance(_ by: Duration) { current += by }
}
