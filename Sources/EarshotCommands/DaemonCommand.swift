import ArgumentParser
import EarshotDaemon
import Foundation
import Logging

/// `earshot daemon`: the main job. Follows the graph, applies the policy, serves the control socket.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the routing engine: the output follows the headset you wear.",
        discussion: """
            Applies decisions through WirePlumber when it runs (cooperative), or links streams itself \
            when no session manager runs (standalone). Reloads the config on SIGHUP and when the file \
            changes; stops on SIGTERM or SIGINT.
            """)

    @Option(help: "Config file (default: $XDG_CONFIG_HOME/earshot/earshot.toml, then /etc/earshot/earshot.toml).", completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(help: "PipeWire remote: a socket name or an absolute socket path (default: PIPEWIRE_REMOTE, then pipewire-0).")
    var remote: String?

    @Option(help: "Control socket path (default: $XDG_RUNTIME_DIR/earshot/control).", completion: .file())
    var socket: String?

    @Option(
        help: "State file (default: $XDG_STATE_HOME/earshot/state.json, else ~/.local/state/earshot/state.json; its directory must be yours and not writable by others).",
        completion: .file(extensions: ["json"]))
    var state: String?

    @Flag(help: "Log every decision's full explanation, not just its summary.")
    var verbose = false

    @Option(
        help: ArgumentHelp(
            "Log every packet the headset drivers send and receive to this file, as hex lines for a bug report (earshot driver decode reads them).",
            valueName: "file"),
        completion: .file())
    var logDriverPackets: String?

    @Option(
        help: ArgumentHelp(
            "Connect the AirPods driver to Unix sockets in this directory, named after each device (AA_BB_CC_DD_EE_FF.aap), instead of an L2CAP socket: for tests and protocol work without a radio.",
            valueName: "dir"),
        completion: .directory)
    var bluetoothLoopback: String?

    func validate() throws {
        // Without a runtime directory the daemon would make /run/user/UID itself (as root) and
        // leave it behind; the session's own is the only right place for its socket and lock.
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        if runtime.isEmpty {
            throw ValidationError(
                "XDG_RUNTIME_DIR is not set: run the daemon in your login session (systemd --user does), or set XDG_RUNTIME_DIR to your session's runtime directory")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // Every message escaped (EscapingLogHandler): log lines quote names any client chose.
        var logger = Logger(label: "earshot") { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
        logger.logLevel = verbose ? .debug : .info
        // EARSHOT_LOG=trace also logs every input the daemon takes (for debugging).
        if let level = environment["EARSHOT_LOG"].flatMap(Logger.Level.init(rawValue:)) { logger.logLevel = level }
        let statePath: String
        do {
            statePath = try state ?? StateStore.defaultPath(environment: environment)
        } catch {
            // As a state directory that is not the user's own: fixed by the user, not a restart.
            logger.error("cannot start: \(error)")
            throw ExitCode(DaemonRunner.configInvalidStatus)
        }
        let options = DaemonOptions(
            configPath: config, remote: remote,
            socketPath: socket ?? ControlSocketPath.default(environment: environment),
            statePath: statePath,
            environment: environment, verbose: verbose
        ).with(bluetoothLoopback: bluetoothLoopback, driverPacketLog: logDriverPackets)
        let status = await DaemonRunner.run(options, logger: logger)
        if status != 0 { throw ExitCode(status) }
    }
}
