/// Emits a note for the first few distinct keys it sees, then stays quiet, so a chatty headset
/// cannot flood the log: the counters keep the totals.
struct NoteOnce: Sendable {
    private var seen: Set<Int> = []

    mutating func note(key: Int, _ text: @autoclosure () -> String) -> DriverOutput? {
        guard seen.count < DriverLimits.maxNotes, seen.insert(key).inserted else { return nil }
        return .note(text())
    }
}

/// `0x0A`-style hex for notes.
func hex(_ value: some BinaryInteger, width: Int = 2) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
}
