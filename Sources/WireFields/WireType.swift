/// What a field's value looks like outward: in JSON (for the doc tables) and as a D-Bus
/// signature (signal arguments, `a{sv}` entries; D-Bus has no null, so none is `""`).
public struct WireType: Sendable, Hashable {
    public var json: String
    public var dbus: String

    public init(json: String, dbus: String) {
        self.json = json
        self.dbus = dbus
    }

    public static let string = WireType(json: "string", dbus: "s")
    public static let integer = WireType(json: "integer", dbus: "x")
    public static let unsigned = WireType(json: "integer", dbus: "t")
    public static let boolean = WireType(json: "boolean", dbus: "b")
    public static let object = WireType(json: "object", dbus: "a{sv}")
}

/// A value type a `WireField` can carry: it says its own `WireType`.
public protocol WireTyped {
    static var wireType: WireType { get }
}

extension String: WireTyped { public static var wireType: WireType { .string } }
extension Int64: WireTyped { public static var wireType: WireType { .integer } }
extension Int: WireTyped { public static var wireType: WireType { .integer } }
extension UInt64: WireTyped { public static var wireType: WireType { .unsigned } }
extension Bool: WireTyped { public static var wireType: WireType { .boolean } }

extension Optional: WireTyped where Wrapped: WireTyped {
    public static var wireType: WireType {
        WireType(json: "\(Wrapped.wireType.json) or null", dbus: Wrapped.wireType.dbus)
    }
}

extension Array: WireTyped where Element: WireTyped {
    public static var wireType: WireType {
        WireType(json: "array of \(Element.wireType.json)s", dbus: "a\(Element.wireType.dbus)")
    }
}

extension Dictionary: WireTyped where Key == String, Value: WireTyped {
    public static var wireType: WireType {
        WireType(json: "object of \(Value.wireType.json)s", dbus: "a{sv}")
    }
}
