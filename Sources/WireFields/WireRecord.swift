/// A record whose outward form is its `wireFields`: Codable comes from them (no `CodingKeys`,
/// no hand-written `encode(to:)`), and so do its D-Bus arguments and its docs table.
public protocol WireRecord: Codable, Sendable, WireTyped {
    /// The fields in their declared order (the D-Bus order where a signal takes them all).
    static var wireFields: [WireField<Self>] { get }
    /// A value every field is then decoded into.
    static var wireBlank: Self { get }
}

extension WireRecord {
    public static var wireType: WireType { .object }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        var record = Self.wireBlank
        for field in Self.wireFields { try field.decode(&record, container, decoder) }
        self = record
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: WireKey.self)
        for field in Self.wireFields { try field.encode(self, &container, encoder) }
    }

    /// The declaration of the field stored at `path`, if one is declared.
    public static func wireField(_ path: PartialKeyPath<Self>) -> WireField<Self>? {
        let path = path as AnyKeyPath
        return wireFields.first { ($0.keyPath as AnyKeyPath) == path }
    }

    /// The JSON key of the field stored at `path` (a declaration error if there is none).
    public static func wireKey(_ path: PartialKeyPath<Self>) -> String {
        guard let field = wireField(path) else { preconditionFailure("no wire field declared for \(path)") }
        return field.key
    }

    /// One row per field, an inlined record's in its place.
    public static var docRows: [WireDocRow] {
        wireFields.flatMap { field in
            field.absent == .inline ? field.inlined : [WireDocRow(key: field.key, type: field.type, absent: field.absent, doc: field.doc)]
        }
    }

    /// The record's fields as a Markdown table for the docs: field, type, meaning. A test
    /// compares it with the docs.
    public static var markdownTable: String {
        let rows = docRows.map { row in
            "| `\(row.key)` | \(row.absent == .omitted ? "\(row.type.json), left out when none" : row.type.json) | \(row.doc) |"
        }
        return (["| field | type | meaning |", "|---|---|---|"] + rows).joined(separator: "\n") + "\n"
    }
}

/// A field as the docs' tables show it.
public struct WireDocRow: Sendable, Hashable {
    public var key: String
    public var type: WireType
    public var absent: WireAbsence
    public var doc: String
}

extension WireRecord {
    /// The coding key of the field stored at `path`: for a request that writes some of a
    /// record's fields under the record's own names.
    public static func codingKey(_ path: PartialKeyPath<Self>) -> WireKey { WireKey(wireKey(path)) }
}
