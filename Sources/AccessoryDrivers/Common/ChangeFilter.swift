/// Passes a value on only when it differs from the last one passed (the first always passes).
struct ChangeFilter<Value: Equatable & Sendable>: Sendable {
    private(set) var last: Value?

    mutating func changed(_ value: Value) -> Value? {
        if value == last { return nil }
        last = value
        return value
    }
}

/// Emits a note for the first few distinct keys it sees, then stays quiet.
struct NoteOnce: Sendable {
    private var seen: Set<Int> = []

    mutating func note(key: Int, _ text: @autoclosure () -> String) -> DriverOutput? {
        guard seen.count < DriverLimits.maxNotes, seen.insert(key).inserted else { return nil }
        return .note(text())
    }
}

func hex(_ value: some BinaryInteger, width: Int = 2) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
}
