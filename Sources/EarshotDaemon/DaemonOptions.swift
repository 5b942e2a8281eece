/// How `earshot daemon` was started.
public struct DaemonOptions: Sendable {
    /// `--config`; nil searches the XDG and system paths.
    public var configPath: String?
    /// PipeWire remote (socket name or absolute path); nil: libpipewire's default.
    public var remote: String?
    public var socketPath: String
    public var statePath: String
    public var environment: [String: String]
    /// Log every decision's full explanation, not just its summary.
    public var verbose: Bool
    /// `--bluetooth-loopback DIR`: the AirPods driver connects to a Unix socket in DIR named
    /// after each device (`AA_BB_CC_DD_EE_FF.aap`) instead of an L2CAP socket.
    public var bluetoothLoopback: String?
    /// `--log-driver-packets FILE`: every packet the drivers send and receive, as hex lines.
    public var driverPacketLog: String?

    public init(configPath: String?, remote: String?, socketPath: String, statePath: String, environment: [String: String], verbose: Bool) {
        self.configPath = configPath
        self.remote = remote
        self.socketPath = socketPath
        self.statePath = statePath
        self.environment = environment
        self.verbose = verbose
    }

    public func with(bluetoothLoopback: String?, driverPacketLog: String?) -> DaemonOptions {
        var options = self
        options.bluetoothLoopback = bluetoothLoopback
        options.driverPacketLog = driverPacketLog
        return options
    }
}
