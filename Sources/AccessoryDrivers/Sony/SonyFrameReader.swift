/// Cuts a Sony MDR byte stream (frames split or run together across reads, garbage between
/// them) into frames, unstuffing as it goes.
///
/// The markers are never stuffed, so a 3E always starts a frame and a 3C always ends one: a new
/// 3E before the 3C drops the partial frame and starts over, nothing is searched twice, and each
/// byte is looked at once (linear cost). A frame holds at most `DriverLimits.maxSonyFrameBytes`
/// unstuffed bytes: its length is checked as soon as the header is in (a length of 4 GiB is
/// dropped at once), and a frame running past its own length is dropped before the 3C comes.
/// Every frame lands in exactly one counter (`packets` plus one of the outcomes); bytes outside
/// any frame, and the rest of a dropped one, in `skippedBytes`.
struct SonyFrameReader: Sendable {
    /// Why a frame was dropped.
    enum Damage: Sendable, Hashable, CustomStringConvertible {
        case badChecksum(carried: UInt8, computed: UInt8)
        /// The length field does not match the payload between the markers.
        case badLength(declared: Int, actual: Int)
        /// Shorter than type, sequence, length and checksum.
        case tooShort(bytes: Int)
        /// A 3D followed by anything but 2C, 2D or 2E (or by the end marker).
        case badEscape(UInt8?)
        case oversized(declared: UInt32)
        /// A new start marker came before the end marker.
        case cutShort
        /// The input ended inside a frame (a capture's last frame without its 3C).
        case noEndMarker

        var description: String {
            switch self {
            case let .badChecksum(carried, computed): "bad checksum (carried \(hex(carried)), computed \(hex(computed)))"
            case let .badLength(declared, actual): "bad length (the header says \(declared) bytes, \(actual) came)"
            case let .tooShort(bytes): "bad length (\(bytes) bytes between the markers, shorter than a header and checksum)"
            case let .badEscape(byte): "bad escape (3D followed by \(byte.map { hex($0) } ?? "the end marker"))"
            case let .oversized(declared): "oversized (length \(declared) over the \(DriverLimits.maxSonyPayloadBytes)-byte cap)"
            case .cutShort: "bad length (a new start marker came before the end marker)"
            case .noEndMarker: "no end marker (the input ended inside a frame)"
            }
        }

        /// The counter this damage lands in.
        func count(in counters: inout DriverCounters) {
            switch self {
            case .badChecksum: counters.badCRC += 1
            case .oversized: counters.oversized += 1
            case .badLength, .tooShort, .badEscape, .cutShort, .noEndMarker: counters.malformed += 1
            }
        }
    }

    enum Item: Sendable, Hashable {
        case frame(SonyFrame)
        case damaged(Damage)
    }

    /// The header (type, sequence, length) is this many unstuffed bytes.
    static let headerBytes = 6

    private var inFrame = false
    /// After a dropped frame, until the next start marker: its rest, not garbage.
    private var inDamagedTail = false
    /// Of `skippedBytes`, those that were the rest of a dropped frame (a decoder names the
    /// frame once, not its tail again).
    private(set) var damagedTailBytes = 0
    private var escaping = false
    /// The current frame's unstuffed bytes.
    private var held: [UInt8] = []
    private var declaredLength: Int?

    var bufferedCount: Int { held.count }

    mutating func read(_ chunk: [UInt8], counters: inout DriverCounters) -> [Item] {
        var items: [Item] = []
        for byte in chunk {
            if byte == SonyFrame.startMarker {
                if inFrame { items.append(drop(.cutShort, counters: &counters)) }
                begin()
                continue
            }
            guard inFrame else {
                counters.skippedBytes += 1
                if inDamagedTail { damagedTailBytes += 1 }
                continue
            }
            if byte == SonyFrame.endMarker {
                items.append(finish(counters: &counters))
                continue
            }
            if escaping {
                escaping = false
                guard SonyFrame.escapedForms.contains(byte) else {
                    items.append(drop(.badEscape(byte), counters: &counters))
                    continue
                }
                if let damage = append(byte | 0x10) { items.append(drop(damage, counters: &counters)) }
            } else if byte == SonyFrame.escape {
                escaping = true
            } else if let damage = append(byte) {
                items.append(drop(damage, counters: &counters))
            }
        }
        return items
    }

    /// The stream ended: a frame begun and not ended is dropped (nil when none is).
    mutating func endOfInput(counters: inout DriverCounters) -> Damage? {
        guard inFrame else { return nil }
        _ = drop(.noEndMarker, counters: &counters)
        // Nothing of it is left to come.
        inDamagedTail = false
        return .noEndMarker
    }

    private mutating func begin() {
        inFrame = true
        inDamagedTail = false
        escaping = false
        held.removeAll(keepingCapacity: true)
        declaredLength = nil
    }

    /// Holds one unstuffed byte; the damage when the frame can no longer be right.
    private mutating func append(_ byte: UInt8) -> Damage? {
        held.append(byte)
        if held.count == Self.headerBytes {
            let length = held[2...5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard length <= DriverLimits.maxSonyPayloadBytes else { return .oversized(declared: length) }
            declaredLength = Int(length)
        } else if let declaredLength, held.count > declaredLength + Self.headerBytes + 1 {
            return .badLength(declared: declaredLength, actual: held.count - Self.headerBytes - 1)
        }
        return nil
    }

    /// The end marker came.
    private mutating func finish(counters: inout DriverCounters) -> Item {
        if escaping { return drop(.badEscape(nil), counters: &counters) }
        guard held.count > Self.headerBytes, let declaredLength else { return drop(.tooShort(bytes: held.count), counters: &counters) }
        let actual = held.count - Self.headerBytes - 1
        guard actual == declaredLength else { return drop(.badLength(declared: declaredLength, actual: actual), counters: &counters) }
        let carried = held[held.count - 1]
        let computed = SonyFrame.checksum(held[0..<(held.count - 1)])
        guard carried == computed else { return drop(.badChecksum(carried: carried, computed: computed), counters: &counters) }
        counters.packets += 1
        let frame = SonyFrame(type: held[0], seq: held[1], payload: Array(held[Self.headerBytes..<(held.count - 1)]))
        end()
        return .frame(frame)
    }

    /// Drops the current frame; the rest of it, up to the next start marker, is skipped.
    private mutating func drop(_ damage: Damage, counters: inout DriverCounters) -> Item {
        counters.packets += 1
        damage.count(in: &counters)
        end()
        inDamagedTail = true
        return .damaged(damage)
    }

    private mutating func end() {
        inFrame = false
        escaping = false
        held.removeAll(keepingCapacity: true)
        declaredLength = nil
    }
}
