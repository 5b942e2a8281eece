/// How the protocol writes a field that has no value, declared once per field instead of in a
/// hand-written `encode(to:)` per type. Swift's synthesized `Encodable` leaves an absent optional
/// out; the protocol's results, events and the state file write it as `null` (a reader sees every
/// field, and `null` says "none"). Requests and a few per-operation fields are still left out
/// when absent (plain optionals: `warnings`, `reporter`, `driver`, a request's `after`).
///
/// Both wrappers read a missing key as absent, so an older peer's lines still decode.

/// An optional written as `null` when absent (`"previous": null`).
@propertyWrapper
public struct NullWhenAbsent<Value: Codable & Sendable>: Codable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// A list written as `[]` when absent, and read as `[]` from a peer older than the field.
@propertyWrapper
public struct EmptyWhenAbsent<Element: Codable & Sendable>: Codable, Sendable {
    public var wrappedValue: [Element]

    public init(wrappedValue: [Element]) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? [] : try container.decode([Element].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension NullWhenAbsent: Equatable where Value: Equatable {}
extension NullWhenAbsent: Hashable where Value: Hashable {}
extension EmptyWhenAbsent: Equatable where Element: Equatable {}
extension EmptyWhenAbsent: Hashable where Element: Hashable {}

extension KeyedDecodingContainer {
    /// A missing key is an absent value (synthesized decoding asks with `decode`, which would
    /// throw `keyNotFound`).
    public func decode<Value>(_ type: NullWhenAbsent<Value>.Type, forKey key: Key) throws -> NullWhenAbsent<Value> {
        try decodeIfPresent(type, forKey: key) ?? NullWhenAbsent(wrappedValue: nil)
    }

    public func decode<Element>(_ type: EmptyWhenAbsent<Element>.Type, forKey key: Key) throws -> EmptyWhenAbsent<Element> {
        try decodeIfPresent(type, forKey: key) ?? EmptyWhenAbsent(wrappedValue: [])
    }
}
