/// One D-Bus value with its type: what message bodies are read into and written from, whole,
/// so code above the binding never touches sd-bus's cursor API.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `element` is the elements' signature, so an empty array keeps its type.
    case array(element: String, [DBusValue])
    /// An element of a dictionary (`a{…}`).
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)
    /// `h`: a file descriptor passed along the message (BlueZ's `Profile1.NewConnection`).
    /// Its owner closes it unless someone `take()`s it; equal only to the same object.
    case fileDescriptor(DBusFileDescriptor)

    /// The value's D-Bus type signature (`s`, `a{sv}`, `(so)`, …).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        case .fileDescriptor: "h"
        }
    }
}

// MARK: - Building

extension DBusValue {
    /// `a{sv}`, the usual property map: each value wrapped in a variant, keys sorted.
    public static func properties(_ entries: [String: DBusValue]) -> DBusValue {
        .array(element: "{sv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `as`.
    public static func strings(_ items: [String]) -> DBusValue {
        .array(element: "s", items.map(DBusValue.string))
    }
}

// MARK: - Reading

extension DBusValue {
    /// The text of a string, object path or signature.
    public var string: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// Any integer type, widened.
    public var integer: Int64? {
        switch self {
        case .byte(let value): Int64(value)
        case .int16(let value): Int64(value)
        case .uint16(let value): Int64(value)
        case .int32(let value): Int64(value)
        case .uint32(let value): Int64(value)
        case .int64(let value): value
        case .uint64(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The descriptor of an `h` value.
    public var fileDescriptor: DBusFileDescriptor? {
        if case .fileDescriptor(let descriptor) = self { return descriptor }
        return nil
    }

    /// The elements of an array.
    public var elements: [DBusValue]? {
        if case .array(_, let items) = self { return items }
        return nil
    }

    /// The value inside a variant; any other value is itself.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// A dictionary with string or object-path keys (`a{sv}`, `a{oa{sa{sv}}}`, …), variants
    /// unwrapped. Nil when this is not such a dictionary.
    public var dictionary: [String: DBusValue]? {
        guard case .array(_, let items) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for item in items {
            guard case .dictEntry(let key, let value) = item, let name = key.string else { return nil }
            result[name] = value.unwrapped
        }
        return result
    }

    /// A list of strings (`as`, `ao`).
    public var stringList: [String]? {
        guard let elements else { return nil }
        var list: [String] = []
        for element in elements {
            guard let text = element.string else { return nil }
            list.append(text)
        }
        return list
    }
}
