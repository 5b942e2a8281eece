import SystemBridge

/// Why a driver could not open its device's channel, sorted by what helps.
enum DriverTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another program holds the channel (a refused connect, or BlueZ says the profile is
    /// registered already): retried with backoff.
    case held(String)
    /// The device did not answer, or went: retried with backoff while it stays connected.
    case unreachable(String)
    /// No Bluetooth sockets in this kernel, or no BlueZ to ask: nothing to retry until that
    /// changes; said once.
    case unavailable(String)
    /// Anything else: retried with backoff.
    case failed(String)

    init(_ error: BluetoothError) {
        switch error.kind {
        case .channelBusy: self = .held("\(error)")
        case .deviceUnreachable, .disconnected: self = .unreachable("\(error)")
        case .bluetoothUnavailable: self = .unavailable("\(error)")
        case .invalidAddress, .notPermitted, .other: self = .failed("\(error)")
        }
    }

    var description: String {
        switch self {
        case .held(let why), .unreachable(let why), .unavailable(let why), .failed(let why): why
        }
    }
}
