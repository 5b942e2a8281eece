import AudioGraph

/// Encodes a value straight into a `JSONValue`, with no JSON text written and read back: how
/// the D-Bus service turns the control protocol's types into `a{sv}` by their field names.
/// Absent optionals written with `encode` are null, as in the text.
enum JSONValueEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        let slot = Slot()
        try slot.store(value, codingPath: [])
        return slot.value
    }

    /// Where one value goes; containers are filled in place and read out at the end.
    fileprivate final class Slot {
        enum Content {
            case empty
            case value(JSONValue)
            case object(Fields)
            case array(Items)
        }

        var content = Content.empty

        var value: JSONValue {
            switch content {
            case .empty: .object([:])
            case .value(let value): value
            case .object(let fields): .object(fields.slots.mapValues(\.value))
            case .array(let items): .array(items.slots.map(\.value))
            }
        }

        func store(_ value: some Encodable, codingPath: [any CodingKey]) throws {
            switch value {
            case let json as JSONValue: content = .value(json)
            case let text as String: content = .value(.string(text))
            case let flag as Bool: content = .value(.bool(flag))
            case let number as Int: content = .value(.integer(Int64(number)))
            case let number as Int8: content = .value(.integer(Int64(number)))
            case let number as Int16: content = .value(.integer(Int64(number)))
            case let number as Int32: content = .value(.integer(Int64(number)))
            case let number as Int64: content = .value(.integer(number))
            case let number as UInt: content = .value(Int64(exactly: number).map(JSONValue.integer) ?? .number(Double(number)))
            case let number as UInt8: content = .value(.integer(Int64(number)))
            case let number as UInt16: content = .value(.integer(Int64(number)))
            case let number as UInt32: content = .value(.integer(Int64(number)))
            case let number as UInt64: content = .value(Int64(exactly: number).map(JSONValue.integer) ?? .number(Double(number)))
            case let number as Double: content = .value(.number(number))
            case let number as Float: content = .value(.number(Double(number)))
            // Anything else encodes itself into this slot (the primitives above end the recursion).
            default: try value.encode(to: ValueEncoder(slot: self, codingPath: codingPath))
            }
        }

        var fields: Fields {
            if case .object(let fields) = content { return fields }
            let fields = Fields()
            content = .object(fields)
            return fields
        }

        var items: Items {
            if case .array(let items) = content { return items }
            let items = Items()
            content = .array(items)
            return items
        }
    }

    fileprivate final class Fields {
        var slots: [String: Slot] = [:]

        func slot(_ key: any CodingKey) -> Slot {
            let slot = Slot()
            slots[key.stringValue] = slot
            return slot
        }
    }

    fileprivate final class Items {
        var slots: [Slot] = []

        func append() -> Slot {
            let slot = Slot()
            slots.append(slot)
            return slot
        }
    }

    fileprivate struct Index: CodingKey {
        var intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }

    fileprivate struct ValueEncoder: Encoder {
        let slot: Slot
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(fields: slot.fields, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            Unkeyed(items: slot.items, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            Single(slot: slot, codingPath: codingPath)
        }
    }

    fileprivate struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let fields: Fields
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws {
            fields.slot(key).content = .value(.null)
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try fields.slot(key).store(value, codingPath: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(fields: fields.slot(key).fields, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(items: fields.slot(key).items, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder {
            ValueEncoder(slot: fields.slot(AnyKey("super")), codingPath: codingPath)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ValueEncoder(slot: fields.slot(key), codingPath: codingPath + [key])
        }
    }

    fileprivate struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    fileprivate struct Unkeyed: UnkeyedEncodingContainer {
        let items: Items
        let codingPath: [any CodingKey]
        var count: Int { items.slots.count }

        mutating func encodeNil() throws {
            items.append().content = .value(.null)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let index = Index(count)
            try items.append().store(value, codingPath: codingPath + [index])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let index = Index(count)
            return KeyedEncodingContainer(Keyed<NestedKey>(fields: items.append().fields, codingPath: codingPath + [index]))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let index = Index(count)
            return Unkeyed(items: items.append().items, codingPath: codingPath + [index])
        }

        mutating func superEncoder() -> any Encoder {
            let index = Index(count)
            return ValueEncoder(slot: items.append(), codingPath: codingPath + [index])
        }
    }

    fileprivate struct Single: SingleValueEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws {
            slot.content = .value(.null)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try slot.store(value, codingPath: codingPath)
        }
    }
}
