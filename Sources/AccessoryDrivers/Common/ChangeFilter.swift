/// Passes a value on only when it differs from the last one passed (the first always passes).
struct ChangeFilter<Value: Equatable & Sendable>: Sendable {
    private(set) var last: Value?

    mutating func changed(_ value: Value) -> Value? {
        if value == last { return nil }
        last = value
        return value
    }
}
