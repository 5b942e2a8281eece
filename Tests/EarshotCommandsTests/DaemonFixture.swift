import AudioGraph
import Foundation
import PipeWireTestSupport

/// A real `earshot daemon` process inside a sandbox, driven through the real CLI.
struct DaemonFixture {
    let sandbox: PipeWireSandbox
    let binary: String
    var process: ChildProcess

    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
    static let speakers = "alsa_output.sandbox.analog-stereo"
    static let address = "AA:BB:CC:DD:EE:FF"

    var socketPath: String { sandbox.runtimeDir.appendingPathComponent("earshot/control").path }

    static func start(in sandbox: PipeWireSandbox, arguments: [String] = []) throws -> DaemonFixture {
        guard let binary = EarshotBinary.url?.path else { throw FixtureError("earshot binary not built") }
        let process = try sandbox.spawn("earshot-daemon", [binary, "daemon", "--verbose"] + arguments, extraEnvironment: ProcessInfo.processInfo.environment["EARSHOT_LOG"].map { ["EARSHOT_LOG": $0] } ?? [:])
        let fixture = DaemonFixture(sandbox: sandbox, binary: binary, process: process)
        try sandbox.waitForFile(fixture.socketPath, createdBy: process)
        return fixture
    }

    /// Stops the daemon with SIGTERM and starts it again with the same state dir.
    mutating func restart(arguments: [String] = []) throws {
        process.stop()
        process = try sandbox.spawn("earshot-daemon", [binary, "daemon", "--verbose"] + arguments)
        try sandbox.waitForFile(socketPath, createdBy: process)
    }

    /// Runs `earshot ARGS…`; returns exit status and stdout.
    @discardableResult
    func earshot(_ arguments: String...) throws -> (status: Int32, output: String) {
        try sandbox.run([binary] + arguments)
    }

    func register(placement: String) throws {
        let result = try earshot("accessory", "register", Self.address, "--capabilities", "audio-switching,placement", "--placement", placement, "--reporter", "org.earshot.test")
        guard result.status == 0 else { throw FixtureError("register failed (\(result.status)): \(result.output)\n\(process.logTail())") }
    }

    func place(_ placement: String) throws {
        let result = try earshot("accessory", "update", Self.address, "--placement", placement, "--reporter", "org.earshot.test")
        guard result.status == 0 else { throw FixtureError("update failed (\(result.status)): \(result.output)\n\(process.logTail())") }
    }

    /// Waits until the default is `sink` (`Graph.isDefault`) and every following stream plays
    /// to it only.
    @discardableResult
    func waitForRoute(to sink: String, streams: [ObjectID], timeout: Duration = .seconds(10)) async throws -> Graph {
        try await sandbox.observer.waitUntil("default \(sink) with streams \(streams) linked there", timeout: timeout) { graph in
            guard graph.isDefault(sink), let node = graph.node(named: sink) else { return false }
            return streams.allSatisfy { stream in
                let targets = graph.linkedTargets(of: stream)
                return targets.map(\.id) == [node.id] && graph.outgoingLinks(of: stream).count == 2
            }
        }
    }
}

extension Graph {
    /// `sink` is the default: configured so, or — nobody having picked one, and Earshot
    /// writing nothing when the session manager already plays its choice (issue 19) — the
    /// session manager's effective default.
    func isDefault(_ sink: String) -> Bool {
        configuredDefaultSinkName == sink || (configuredDefaultSinkName == nil && effectiveDefaultSinkName == sink)
    }
}
