import ArgumentParser
import FoundationEssentials

/// The daemon's command line, declared once: `earshot daemon` (the client, which checks them and
/// hands over to the daemon executable) and `earshotd` (which runs) parse the same options, so
/// help, completions and manual pages say the same thing.
public struct DaemonArguments: ParsableArguments {
    public init() {}

    @Option(help: "Config file (default: $XDG_CONFIG_HOME/earshot/earshot.toml, then /etc/earshot/earshot.toml).", completion: .file(extensions: ["toml"]))
    public var config: String?

    @Option(help: "PipeWire remote: a socket name or an absolute socket path (default: PIPEWIRE_REMOTE, then pipewire-0).")
    public var remote: String?

    @Option(help: "Control socket path (default: $XDG_RUNTIME_DIR/earshot/control).", completion: .file())
    public var socket: String?

    @Option(
        help: "State file (default: $XDG_STATE_HOME/earshot/state.json, else ~/.local/state/earshot/state.json; its directory must be yours and not writable by others).",
        completion: .file(extensions: ["json"]))
    public var state: String?

    @Flag(help: "Log every decision's full explanation, not just its summary.")
    public var verbose = false

    @Option(
        help: ArgumentHelp(
            "Log every packet the headset drivers send and receive to this file, as hex lines for a bug report (earshot driver decode reads them).",
            valueName: "file"),
        completion: .file())
    public var logDriverPackets: String?

    @Option(
        help: ArgumentHelp(
            "Connect the AirPods driver to Unix sockets in this directory, named after each device (AA_BB_CC_DD_EE_FF.aap), instead of an L2CAP socket: for tests and protocol work without a radio.",
            valueName: "dir"),
        completion: .directory)
    public var bluetoothLoopback: String?

    public func validate() throws {
        // Without a runtime directory the daemon would make /run/user/UID itself (as root) and
        // leave it behind; the session's own is the only right place for its socket and lock.
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        if runtime.isEmpty {
            throw ValidationError(
                "XDG_RUNTIME_DIR is not set: run the daemon in your login session (systemd --user does), or set XDG_RUNTIME_DIR to your session's runtime directory")
        }
    }
}
