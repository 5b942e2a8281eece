/// Hard caps that keep a misbehaving or hostile headset from costing memory or time.
public enum DriverLimits {
    /// Largest AAP packet accepted (the longest documented ones, metadata and EQ, are a few
    /// hundred bytes).
    public static let maxAAPPacketBytes = 2048
    /// Largest Galaxy Buds size field accepted (id + payload + CRC); status messages are < 64.
    public static let maxGalaxyFrameSize = 1024
    /// Most stream bytes a Galaxy Buds session holds while waiting for the rest of a frame.
    public static let maxGalaxyBufferedBytes = 4096
    /// Distinct unknown opcodes / ids announced with a `.note`; the rest are only counted.
    public static let maxNotes = 16
    /// Most battery components accepted in one AAP battery packet: any count its one-byte field
    /// can say, as long as the packet holds them all (a complete 9-component packet is real).
    public static let maxAAPBatteryComponents = 255
}
