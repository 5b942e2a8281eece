/// One Galaxy Buds message with its framing removed.
public struct GalaxyBudsFrame: Sendable, Hashable {
    public var id: UInt8
    public var payload: [UInt8]
    public var isResponse: Bool

    public init(id: UInt8, payload: [UInt8], isResponse: Bool = false) {
        self.id = id
        self.payload = payload
        self.isResponse = isResponse
    }

    /// The message ids this layer reads.
    public enum MessageID {
        public static let statusUpdated: UInt8 = 0x60
        public static let extendedStatusUpdated: UInt8 = 0x61
    }

    /// The bytes of one frame: marker, header, id, payload, CRC-16/XMODEM of id + payload
    /// (little-endian), end marker. The size field counts id + payload + CRC.
    ///
    /// - Precondition: the size fits the framing (legacy: 255, current: 1023) and the cap.
    public static func encode(id: UInt8, payload: [UInt8], framing: GalaxyBudsFraming, isResponse: Bool = false, isFragment: Bool = false) -> [UInt8] {
        let size = 1 + payload.count + 2
        precondition(size <= DriverLimits.maxGalaxyFrameSize && size <= (framing == .legacy ? 0xFF : 0x3FF), "frame too large")
        var bytes: [UInt8] = [framing.startMarker]
        switch framing {
        case .legacy:
            bytes += [isResponse ? 1 : 0, UInt8(size)]
        case .current:
            var header = UInt16(size)
            if isResponse { header |= 0x1000 }
            if isFragment { header |= 0x2000 }
            bytes += [UInt8(header & 0xFF), UInt8(header >> 8)]
        }
        let crc = CRC16XModem.checksum([id] + payload)
        bytes += [id] + payload + [UInt8(crc & 0xFF), UInt8(crc >> 8), framing.endMarker]
        return bytes
    }

    public func encoded(framing: GalaxyBudsFraming) -> [UInt8] {
        Self.encode(id: id, payload: payload, framing: framing, isResponse: isResponse)
    }
}
