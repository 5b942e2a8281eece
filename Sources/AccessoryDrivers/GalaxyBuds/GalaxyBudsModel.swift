/// The Galaxy Buds generations that differ on the wire.
public enum GalaxyBudsModel: String, Sendable, Hashable, CaseIterable {
    /// Galaxy Buds (2019): legacy framing (0xFE ... 0xEE), one wear-state byte, no case battery.
    case firstGeneration = "galaxy-buds"
    /// Buds+, Buds Live, Buds Pro: current framing, placement nibbles, served on the standard
    /// Serial Port Profile UUID.
    case plusLiveOrPro = "galaxy-buds-plus-live-pro"
    /// Buds2, Buds2 Pro, Buds FE, Buds3 and later: current framing, Samsung's own service UUID.
    case secondGenerationOrLater = "galaxy-buds2-or-later"

    public var framing: GalaxyBudsFraming {
        self == .firstGeneration ? .legacy : .current
    }

    /// The RFCOMM service to connect to (resolve its channel through SDP).
    public var rfcommServiceUUID: String {
        switch self {
        case .firstGeneration: GalaxyBudsServiceUUID.firstGeneration
        case .plusLiveOrPro: GalaxyBudsServiceUUID.serialPort
        case .secondGenerationOrLater: GalaxyBudsServiceUUID.secondGeneration
        }
    }
}

/// The service UUIDs the Galaxy Buds control channel is offered under (lower case, as BlueZ
/// lists them).
public enum GalaxyBudsServiceUUID {
    public static let firstGeneration = "00001102-0000-1000-8000-00805f9b34fd"
    /// The standard Serial Port Profile UUID: not Samsung-specific, so never enough on its own.
    public static let serialPort = "00001101-0000-1000-8000-00805f9b34fb"
    public static let secondGeneration = "2e73a4ad-332d-41fc-90e2-16bef06523f2"
}

/// How frames are marked and how their header is laid out.
public enum GalaxyBudsFraming: Sendable, Hashable {
    /// `FE <type> <size> <id> <payload> <crc lo> <crc hi> EE` (first-generation Buds).
    case legacy
    /// `FD <header lo> <header hi> <id> <payload> <crc lo> <crc hi> DD` (Buds+ and later); the
    /// header holds the size in its low 10 bits, 0x1000 = response, 0x2000 = fragment.
    case current

    public var startMarker: UInt8 { self == .legacy ? 0xFE : 0xFD }
    public var endMarker: UInt8 { self == .legacy ? 0xEE : 0xDD }
}
