import FoundationEssentials

/// Any JSON value, decoded with Foundation's JSONDecoder. pw-dump objects vary by type and
/// version, so the graph decoder walks these instead of fixed Codable structs.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    public static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// Compact JSON with sorted keys: one spelling per value, so texts compare.
    public var canonicalText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The value as a PipeWire property string: pw-dump prints numbers and booleans bare,
    /// everything else is already a string.
    public var propertyText: String? {
        switch self {
        case .null: return nil
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .number(let value): return PropertyText.canonical(value)
        case .string(let value): return value
        case .array, .object: return canonicalText
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
}

/// One spelling for numeric property values, so a live graph (raw strings) and a pw-dump
/// (numbers re-printed by pw-dump) compare equal.
public enum PropertyText {
    public static func canonical(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    public static func canonical(_ text: String) -> String {
        if let integer = Int64(text) { return String(integer) }
        if text.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true,
            let number = Double(text), number.isFinite
        {
            return canonical(number)
        }
        return text
    }
}
