/// A JSON key as declared by a `WireField`: the declarations are the keys, so no `CodingKeys`
/// enum repeats them.
public struct WireKey: CodingKey, Hashable, Sendable {
    public let stringValue: String
    public var intValue: Int? { nil }

    public init(_ name: String) { stringValue = name }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}
