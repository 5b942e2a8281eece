import ArgumentParser
import ControlProtocol
import DaemonArguments
import EarshotDaemon
import FoundationEssentials
import Logging

/// `earshotd`: the daemon executable (installed as /usr/libexec/earshotd; `earshot daemon` hands
/// over to it). Follows the graph, applies the policy, serves the control socket.
@main
struct Earshotd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshotd",
        abstract: "Run the routing engine: the output follows the headset you wear.",
        discussion: """
            The daemon behind `earshot daemon`, which starts it with the same options. Applies \
            decisions through WirePlumber when it runs (cooperative), or links streams itself when \
            no session manager runs (standalone). Reloads the config on SIGHUP and when the file \
            changes; stops on SIGTERM or SIGINT.
            """,
        version: EarshotVersion.current)

    @OptionGroup var arguments: DaemonArguments

    /// Usage errors exit 2, as the client's do (`UsageExit`).
    static func main() async {
        await UsageExit.main(Earshotd.self)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // Every message escaped (EscapingLogHandler): log lines quote names any client chose.
        var logger = Logger(label: "earshot") { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
        logger.logLevel = arguments.verbose ? .debug : .info
        // EARSHOT_LOG=trace also logs every input the daemon takes (for debugging).
        if let level = environment["EARSHOT_LOG"].flatMap(Logger.Level.init(rawValue:)) { logger.logLevel = level }
        let statePath: String
        do {
            statePath = try arguments.state ?? StateLocation.defaultPath(environment: environment)
        } catch {
            // As a state directory that is not the user's own: fixed by the user, not a restart.
            logger.error("cannot start: \(error)")
            throw ExitCode(DaemonRunner.configInvalidStatus)
        }
        let options = DaemonOptions(
            configPath: arguments.config, remote: arguments.remote,
            socketPath: arguments.socket ?? ControlSocketPath.default(environment: environment),
            statePath: statePath,
            environment: environment, verbose: arguments.verbose
        ).with(bluetoothLoopback: arguments.bluetoothLoopback, driverPacketLog: arguments.logDriverPackets)
        let status = await DaemonRunner.run(options, logger: logger)
        if status != 0 { throw ExitCode(status) }
    }
}
