/// One `(subject, key)` entry of a metadata object.
public struct MetadataEntry: Sendable, Hashable, Codable {
    public var subject: ObjectID
    public var key: String
    /// `Spa:String:JSON`, `Spa:Id`… or nil when the writer gave none.
    public var type: String?
    public var value: String

    public init(subject: ObjectID, key: String, type: String?, value: String) {
        self.subject = subject
        self.key = key
        self.type = (type?.isEmpty ?? true) ? nil : type
        self.value = value
    }

    /// The `name` of a `{"name": …}` JSON value, as used by the `default.*` keys.
    public var jsonName: String? { MetadataEntry.name(inJSON: value) }

    /// `{"name":"…"}` for `name`: the value Earshot writes to the `default.*` keys.
    public static func json(name: String) -> String {
        DefaultNameJSON.fastText(name) ?? JSONValue.object(["name": .string(name)]).canonicalText
    }

    public static func name(inJSON text: String) -> String? {
        if let name = DefaultNameJSON.fastName(text) { return name }
        guard let object = try? JSONValue.parse(text), case .object(let fields) = object,
            case .string(let name)? = fields["name"]
        else { return nil }
        return name
    }
}

public struct MetadataKey: Sendable, Hashable, Codable, Comparable {
    public var subject: ObjectID
    public var key: String
    public init(subject: ObjectID, key: String) {
        self.subject = subject
        self.key = key
    }
    public static func < (a: MetadataKey, b: MetadataKey) -> Bool {
        (a.subject, a.key) < (b.subject, b.key)
    }
}

public struct Metadata: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var props: Properties
    public var entries: [MetadataKey: MetadataEntry]

    public init(id: ObjectID, props: Properties = [:], entries: [MetadataKey: MetadataEntry] = [:]) {
        self.id = id
        self.props = props
        self.entries = entries
    }

    public var serial: UInt64? { props.objectSerial }
    public var name: String? { props["metadata.name"] }

    public subscript(subject: ObjectID, key: String) -> MetadataEntry? {
        entries[MetadataKey(subject: subject, key: key)]
    }

    /// Applies a `property` event: nil value removes the key; nil key clears the subject
    /// (PipeWire's semantics for `pw_metadata_set_property` and `clear`).
    public mutating func set(subject: ObjectID, key: String?, type: String?, value: String?) {
        guard let key else {
            entries = entries.filter { $0.key.subject != subject }
            return
        }
        let entryKey = MetadataKey(subject: subject, key: key)
        if let value {
            entries[entryKey] = MetadataEntry(subject: subject, key: key, type: type, value: value)
        } else {
            entries[entryKey] = nil
        }
    }
}
