/// A wire enum kept open to a newer peer (as swift-system's `Errno`): the text is what travels,
/// and a value this build does not know is kept as it came instead of failing the whole line;
/// the daemon, which only writes values it knows, uses it typed (`.known`, `== .input`).
public struct OpenEnum<Known: RawRepresentable & Sendable & Hashable>: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where Known.RawValue == String {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ known: Known) { rawValue = known.rawValue }

    /// The value as this build knows it; nil for a newer peer's value.
    public var known: Known? { Known(rawValue: rawValue) }
    public var description: String { rawValue }

    public static func == (lhs: OpenEnum, rhs: Known) -> Bool { lhs.rawValue == rhs.rawValue }
    public static func != (lhs: OpenEnum, rhs: Known) -> Bool { lhs.rawValue != rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension OpenEnum: WireTyped {
    public static var wireType: WireType { .string }
}

extension Optional {
    /// `event?.reason == .initial`: an absent value is none of the known ones.
    public static func == <Known>(lhs: Self, rhs: Known) -> Bool where Wrapped == OpenEnum<Known> {
        lhs.map { $0 == rhs } ?? false
    }
}
