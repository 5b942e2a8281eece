import AudioGraph
import RoutingPolicy

/// Everything that makes the daemon act, taken one at a time through `Daemon.handle(_:)`.
/// Each source (PipeWire, the control API, the timer, the config watcher, BlueZ, MPRIS)
/// submits these; nothing else changes the daemon's state.
enum DaemonInput: Sendable {
    /// A connection finished its initial sync: `graph` is everything that existed then.
    case connected(any PipeWireCommands, Graph)
    /// Changes after `.connected`, in order, as one burst: decided one by one, applied once.
    case graphChanged([GraphChange])
    /// The connection went away.
    case disconnected(any PipeWireCommands)
    /// register / update / unregister from the socket or D-Bus; `read`: when the socket read
    /// its line (`MonotonicClock`), to time Earshot's own span of the switch it causes.
    case accessory(AccessoryRequest, read: UInt64? = nil)
    /// The policy's next deadline has come (placement timing).
    case timerFired
    /// A config file parsed (off the actor) and valid: replaces the running one.
    case configLoaded(PolicyConfig, ConfigSource, cause: String)
    /// This host's Bluetooth adapters as BlueZ lists them now.
    case hostAddressesChanged([HostAddress])
    /// An MPRIS player's PlaybackStatus changed (a player the user touches is theirs again).
    /// `signal`: its number in the order the bus delivered status signals (`MPRISPlayers`).
    case playerStatusChanged(connection: String, status: String, signal: UInt64)
}

extension DaemonInput {
    /// A short name for traces.
    var kind: String {
        switch self {
        case .connected: "connected"
        case .graphChanged(let changes): "\(changes.count) graph change(s)"
        case .disconnected: "disconnected"
        case .accessory(let request, _): "\(request.verb) \(request.identity)"
        case .timerFired: "timer"
        case .configLoaded: "config"
        case .hostAddressesChanged: "host addresses"
        case .playerStatusChanged: "player status"
        }
    }
}

/// What handling an input answers its submitter.
enum InputResult: Sendable {
    case done
    case accessory(Result<AccessoryConfiguration?, AccessoryError>)
    /// The daemon stopped before taking the input.
    case stopped
}
