/// One Galaxy Buds message with its framing removed.
public struct GalaxyBudsFrame: Sendable, Hashable {
    public var id: UInt8
    public var payload: [UInt8]
    public var isResponse: Bool
    /// Header bits no public note names (current framing: 0x0400, 0x0800, 0x4000, 0x8000),
    /// as they came; 0 when none. A real Buds Pro (rev 10) status frame has 0x0C00 set.
    public var headerFlags: UInt16

    public init(id: UInt8, payload: [UInt8], isResponse: Bool = false, headerFlags: UInt16 = 0) {
        self.id = id
        self.payload = payload
        self.isResponse = isResponse
        self.headerFlags = headerFlags
    }

    /// The current framing's header: size in the low 10 bits (as the reference client masks
    /// it), 0x1000 response, 0x2000 fragment, every other bit a flag.
    public enum Header {
        public static let sizeMask: UInt16 = 0x03FF
        public static let response: UInt16 = 0x1000
        public static let fragment: UInt16 = 0x2000
        public static let unnamedFlags: UInt16 = ~(sizeMask | response | fragment)
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
    public static func encode(
        id: UInt8, payload: [UInt8], framing: GalaxyBudsFraming, isResponse: Bool = false, isFragment: Bool = false, headerFlags: UInt16 = 0
    ) -> [UInt8] {
        let size = 1 + payload.count + 2
        precondition(size <= DriverLimits.maxGalaxyFrameSize && size <= (framing == .legacy ? 0xFF : 0x3FF), "frame too large")
        var bytes: [UInt8] = [framing.startMarker]
        switch framing {
        case .legacy:
            bytes += [isResponse ? 1 : 0, UInt8(size)]
        case .current:
            var header = UInt16(size) | (headerFlags & Header.unnamedFlags)
            if isResponse { header |= Header.response }
            if isFragment { header |= Header.fragment }
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
