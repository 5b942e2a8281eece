/// Hard caps that keep a misbehaving or hostile headset from costing memory or time.
public enum DriverLimits {
    /// Largest AAP packet accepted (the longest documented ones, metadata and EQ, are a few
    /// hundred bytes).
    public static let maxAAPPacketBytes = 2048
    /// Largest Galaxy Buds size field accepted (id + payload + CRC); status messages are < 64.
    public static let maxGalaxyFrameSize = 1024
    /// Most stream bytes a Galaxy Buds session holds while waiting for the rest of a frame.
    public static let maxGalaxyBufferedBytes = 4096
    /// Largest Sony MDR payload accepted (the length field); status messages are < 64 bytes. A
    /// larger length is dropped as soon as the header is read, so it never waits for its bytes.
    public static let maxSonyPayloadBytes = 2048
    /// Most unstuffed bytes a Sony session holds for one frame: type, sequence, length, the
    /// largest payload and the checksum. A frame that runs past its own length is dropped.
    public static let maxSonyFrameBytes = maxSonyPayloadBytes + 7
    /// Most commands a Sony session queues behind the one awaiting its ACK (start-up needs 7).
    public static let maxSonyQueuedCommands = 8
    /// Distinct unknown opcodes / ids announced with a `.note`; the rest are only counted.
    public static let maxNotes = 16
    /// Most battery components accepted in one AAP battery packet: any count its one-byte field
    /// can say, as long as the packet holds them all (a complete 9-component packet is real).
    public static let maxAAPBatteryComponents = 255
}
