import TOMLKit

/// A TOML value copied out of TOMLKit's tree into plain Swift, so validation works on Sendable
/// values and never touches the parser's pointers after loading.
indirect enum ConfigValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([ConfigValue])
    /// Keys in file order is not something TOMLKit keeps; sorted keys make errors repeatable.
    case table([(key: String, value: ConfigValue)])
    /// Dates and times, which no key takes.
    case other(String)

    init(_ toml: any TOMLValueConvertible) {
        switch toml.type {
        case .string: self = .string(toml.string ?? "")
        case .int: self = .integer(toml.int ?? 0)
        case .double: self = .float(toml.double ?? 0)
        case .bool: self = .boolean(toml.bool ?? false)
        case .array: self = .array((toml.array.map { Array($0) } ?? []).map { ConfigValue($0) })
        case .table:
            let table = toml.table
            let keys = (table?.keys ?? []).sorted()
            self = .table(keys.compactMap { key in table?[key].map { (key, ConfigValue($0)) } })
        default: self = .other(toml.debugDescription)
        }
    }

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .other: "a date or time"
        }
    }

    static func == (a: ConfigValue, b: ConfigValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.float(let x), .float(let y)): x == y
        case (.boolean(let x), .boolean(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.table(let x), .table(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        case (.other(let x), .other(let y)): x == y
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(typeName)
    }
}
