import SystemPackage

/// A Bluetooth socket that could not be opened, connected, written or read, classified so a
/// caller can say what to do about it, with the failed system call kept for the details.
public struct BluetoothError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The text was not an address of the form `AA:BB:CC:DD:EE:FF`.
        case invalidAddress
        /// The kernel has no Bluetooth sockets (EAFNOSUPPORT, EPROTONOSUPPORT): no `bluetooth`
        /// module, or a container without it.
        case bluetoothUnavailable
        /// The channel is taken or refused (EBUSY, EADDRINUSE, ECONNREFUSED): another
        /// program (e.g. LibrePods) probably holds it.
        case channelBusy
        /// The device did not answer (EHOSTDOWN, EHOSTUNREACH, ETIMEDOUT, ENETDOWN, ENODEV, or
        /// the connect deadline passed): off, out of range, or no adapter powered on.
        case deviceUnreachable
        /// The kernel or BlueZ refused us (EACCES, EPERM): missing capability or pairing.
        case notPermitted
        /// An open connection broke (ECONNRESET, ECONNABORTED, ENOTCONN, EPIPE).
        case disconnected
        /// Anything else; `systemError` says what.
        case other
    }

    public let kind: Kind
    /// Who: the address and channel (`AA:BB:CC:DD:EE:FF PSM 0x1001`), or the text that was not
    /// an address.
    public let peer: String
    /// The failed call, nil for an address that did not parse.
    public let systemError: SystemError?

    public init(kind: Kind, peer: String, systemError: SystemError?) {
        self.kind = kind
        self.peer = peer
        self.systemError = systemError
    }

    /// A failed call, classified by its errno.
    init(_ error: SystemError, peer: String) {
        self.init(kind: Self.kind(of: error.errno), peer: peer, systemError: error)
    }

    static func invalidAddress(_ text: String) -> BluetoothError {
        BluetoothError(kind: .invalidAddress, peer: text, systemError: nil)
    }

    static func kind(of errno: Errno) -> Kind {
        switch errno {
        case .addressFamilyNotSupported, .protocolNotSupported, .socketTypeNotSupported: .bluetoothUnavailable
        case .resourceBusy, .addressInUse, .connectionRefused: .channelBusy
        case .hostIsDown, .noRouteToHost, .timedOut, .networkDown, .operationNotSupportedByDevice: .deviceUnreachable
        case .permissionDenied, .notPermitted: .notPermitted
        case .connectionReset, .connectionAbort, .socketNotConnected, .brokenPipe: .disconnected
        default: .other
        }
    }

    public var description: String {
        let cause = systemError.map { " (\($0))" } ?? ""
        switch kind {
        case .invalidAddress:
            return "'\(peer)' is not a Bluetooth address (expected six hex pairs like AA:BB:CC:DD:EE:FF)"
        case .bluetoothUnavailable:
            return "this kernel has no Bluetooth sockets (AF_BLUETOOTH)\(cause)"
        case .channelBusy:
            return "\(peer) is busy: another program (e.g. LibrePods) probably holds the channel\(cause)"
        case .deviceUnreachable:
            return "\(peer) is unreachable: is it on, in range and connected, and the adapter powered?\(cause)"
        case .notPermitted:
            return "\(peer): not permitted (capabilities, or the device is not paired)\(cause)"
        case .disconnected:
            return "\(peer) disconnected\(cause)"
        case .other:
            return "\(peer): \(systemError.map(\.description) ?? "failed")"
        }
    }
}
