/// One outward field, declared once: its JSON key, its type, its doc line, and how it is read
/// and written — as `ConfigSchema` declares each config key. A record's `wireFields` are its
/// Codable (`WireRecord`), its D-Bus arguments (by key path) and its row in the docs' tables.
///
/// How an absent value travels is said per field, because the protocol's rules differ by field:
/// results and events write none as `null` (a reader sees every field), a few per-operation
/// fields are left out, and a field newer than some peers reads their lines with a default.
public struct WireField<Record>: Sendable {
    public typealias Absent = WireAbsence

    public let key: String
    public let type: WireType
    public let absent: Absent
    /// One line for the docs' tables.
    public let doc: String
    /// The record's property, to find this declaration from a key path (D-Bus arguments).
    public let keyPath: AnyKeyPath & Sendable
    /// The inlined record's rows, for the docs (`.inline` only; nested inlines expanded).
    public let inlined: [WireDocRow]
    let encode: @Sendable (Record, inout KeyedEncodingContainer<WireKey>, any Encoder) throws -> Void
    let decode: @Sendable (inout Record, KeyedDecodingContainer<WireKey>, any Decoder) throws -> Void
}

extension WireField {
    /// A field that is always there.
    public static func field<Value: Codable & WireTyped & Sendable>(
        _ key: String, _ path: WritableKeyPath<Record, Value> & Sendable, _ doc: String
    ) -> WireField {
        keyed(key, path, Value.wireType, .required, doc, write: { value, container, key in try container.encode(value, forKey: key) }) { container, key in
            try container.decode(Value.self, forKey: key)
        }
    }

    /// An optional field written as `null` when absent; `null` and a missing key read as none.
    public static func nullable<Value: Codable & WireTyped & Sendable>(
        _ key: String, _ path: WritableKeyPath<Record, Value?> & Sendable, _ doc: String
    ) -> WireField {
        keyed(key, path, Value?.wireType, .null, doc, write: { value, container, key in
            if let value { try container.encode(value, forKey: key) } else { try container.encodeNil(forKey: key) }
        }) { container, key in try container.decodeIfPresent(Value.self, forKey: key) }
    }

    /// An optional field left out when absent.
    public static func omitted<Value: Codable & WireTyped & Sendable>(
        _ key: String, _ path: WritableKeyPath<Record, Value?> & Sendable, _ doc: String
    ) -> WireField {
        keyed(key, path, Value.wireType, .omitted, doc, write: { value, container, key in try container.encodeIfPresent(value, forKey: key) }) {
            container, key in try container.decodeIfPresent(Value.self, forKey: key)
        }
    }

    /// A field always written, read as `fallback` from a peer older than it (a missing key or
    /// `null`).
    public static func defaulted<Value: Codable & WireTyped & Sendable>(
        _ key: String, _ path: WritableKeyPath<Record, Value> & Sendable, _ fallback: Value, _ doc: String
    ) -> WireField {
        keyed(key, path, Value.wireType, .defaulted, doc, write: { value, container, key in try container.encode(value, forKey: key) }) {
            container, key in try container.decodeIfPresent(Value.self, forKey: key) ?? fallback
        }
    }

    /// The one shape of a keyed field: how its stored value is written and read under its key.
    private static func keyed<Stored: Sendable>(
        _ key: String, _ path: WritableKeyPath<Record, Stored> & Sendable, _ type: WireType, _ absent: WireAbsence, _ doc: String,
        write: @escaping @Sendable (Stored, inout KeyedEncodingContainer<WireKey>, WireKey) throws -> Void,
        read: @escaping @Sendable (KeyedDecodingContainer<WireKey>, WireKey) throws -> Stored
    ) -> WireField {
        let codingKey = WireKey(key)
        return WireField(
            key: key, type: type, absent: absent, doc: doc, keyPath: path, inlined: [],
            encode: { record, container, _ in try write(record[keyPath: path], &container, codingKey) },
            decode: { record, container, _ in record[keyPath: path] = try read(container, codingKey) })
    }

    /// A nested record whose fields are written beside this record's own (an accessory object's
    /// configuration).
    public static func inline<Nested: WireRecord>(_ path: WritableKeyPath<Record, Nested> & Sendable) -> WireField {
        WireField(
            key: "", type: .object, absent: .inline, doc: "", keyPath: path,
            inlined: Nested.docRows,
            encode: { record, _, encoder in try record[keyPath: path].encode(to: encoder) },
            decode: { record, _, decoder in record[keyPath: path] = try Nested(from: decoder) })
    }
}

/// How a field travels when it has no value.
public enum WireAbsence: Sendable, Hashable {
    /// Always there (decoding fails without it).
    case required
    /// None is written as `null`; `null` and a missing key read as none.
    case null
    /// None is left out; a missing key reads as none.
    case omitted
    /// Always written; a missing key (an older peer) reads as the default.
    case defaulted
    /// Fields of a nested record written beside this record's own.
    case inline
}
