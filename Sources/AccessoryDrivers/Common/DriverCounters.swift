/// What a session did with its input. Every byte or packet it skipped is counted here.
///
/// For every packet (AAP) or delimited frame (Galaxy Buds, Sony):
/// `packets == decoded + unknownOpcodes + ignored + malformed + badCRC + oversized`.
/// Bytes outside any frame (garbage before a start marker) are counted in `skippedBytes`.
public struct DriverCounters: Sendable, Equatable {
    /// Packets or frames seen, whatever became of them.
    public var packets = 0
    /// Decoded into state (wear, battery, audio source).
    public var decoded = 0
    /// Well formed, but an opcode or message id this layer does not decode.
    public var unknownOpcodes = 0
    /// Well formed and known, but deliberately not used (e.g. noise-control echoes, fragments).
    public var ignored = 0
    /// Too short for its opcode, bad header or end marker, impossible size.
    public var malformed = 0
    /// Galaxy Buds frames whose CRC, or Sony frames whose checksum, did not match.
    public var badCRC = 0
    /// Longer than the cap for one packet or frame; dropped.
    public var oversized = 0
    /// A decoded message held a field value no public note explains; that field was not used.
    public var unknownValues = 0
    /// Stream bytes dropped while looking for the next start marker.
    public var skippedBytes = 0
    /// Galaxy Buds frames whose header had bits no note names (kept, and read as usual).
    public var flaggedFrames = 0

    public init() {}

    /// True when every packet is accounted for exactly once.
    public var isConsistent: Bool {
        packets == decoded + unknownOpcodes + ignored + malformed + badCRC + oversized
    }
}
