import FoundationEssentials
import TOMLKit

/// Reads a TOML config (through TOMLKit) into a `PolicyConfig`, checking it against the schema.
/// Reports every error at once, each as file:line:column. It reads no file: the callers do
/// (SystemBridge's `InputFile` in the client, `DaemonConfigFile` in the daemon) and give it the
/// text and the file's name.
public enum PolicyConfigLoader {
    /// The most a config file may have: 16 MiB (the 10 000-rule benchmark config is about
    /// 1 MiB). The callers refuse a larger one with its size before it is read.
    public static let sizeLimit = 16 << 20

    /// A file that could not be read: `FILE:1:1: cannot read the file: REASON`.
    public static func unreadable(_ file: String, _ reason: String) -> ConfigErrors {
        ConfigErrors([ConfigError(SourceLocation(file: file, line: 1, column: 1), "cannot read the file: \(reason)")])
    }

    /// Text that is not UTF-8 (the bytes of a file read elsewhere, as the daemon reads).
    public static func parse(_ bytes: [UInt8], file: String) throws(ConfigErrors) -> PolicyConfig {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw unreadable(file, "not UTF-8 text") }
        return try parse(text, file: file)
    }

    public static func parse(_ text: String, file: String) throws(ConfigErrors) -> PolicyConfig {
        let root: ConfigValue
        do {
            root = ConfigValue(try TOMLTable(string: text))
        } catch let error as TOMLParseError {
            let location = SourceLocation(file: file, line: max(1, error.source.begin.line), column: max(1, error.source.begin.column))
            throw ConfigErrors([ConfigError(location, "TOML syntax: \(error.description)")])
        } catch {
            throw ConfigErrors([ConfigError(SourceLocation(file: file, line: 1, column: 1), "TOML syntax: \(error)")])
        }
        var builder = ConfigBuilder(reader: ConfigReader(locator: TOMLKeyLocator(file: file, text: text)))
        builder.config.file = file
        builder.read(root)
        guard builder.reader.errors.isEmpty else { throw ConfigErrors(builder.reader.errors) }
        return builder.config
    }
}

/// Walks the parsed document table by table, filling a config from the defaults up.
private struct ConfigBuilder {
    var reader: ConfigReader
    var config = PolicyConfig()
    static let priorities = ConfigSchema.key("rule[].priority")?.integers ?? 0...0

    mutating func read(_ root: ConfigValue) {
        guard case .table(let entries) = root else { return }
        let tableNames = ConfigSchema.tables.map { $0.hasSuffix("[]") ? String($0.dropLast(2)) : $0 }
        let known = ConfigSchema.keys(inTable: "").map(\.name) + tableNames
        reader.checkKeys(entries.filter { $0.key != "weights" }, known: known, at: [], what: "the top level")
        for (key, value) in entries {
            let path: ConfigReader.Path = [.key(key)]
            if key == "weights" {
                refuseWeights(value)
            } else if let field = ConfigSchema.key(key)?.field {
                field.read(&reader, value, path, &config)
            } else if key == "rule" {
                eachTable(value, key) { builder, entries, index in builder.rule(entries, index) }
            } else if key == "accessory" {
                eachTable(value, key) { builder, entries, index in builder.accessory(entries, index) }
            } else if tableNames.contains(key) {
                section(value, key)
            }
        }
    }

    /// A table of plain keys (`[timing]`, `[playback]`), each read by its declaration.
    private mutating func section(_ value: ConfigValue, _ name: String) {
        guard let entries = reader.table(value, [.key(name)]) else { return }
        reader.checkKeys(entries, known: ConfigSchema.keys(inTable: name).map(\.name), at: [.key(name)], what: "[\(name)]")
        for (key, value) in entries {
            ConfigSchema.key("\(name).\(key)")?.field?.read(&reader, value, [.key(name), .key(key)], &config)
        }
    }

    /// `[weights]` is gone: each of its keys is an error saying what to write instead.
    private mutating func refuseWeights(_ value: ConfigValue) {
        guard case .table(let entries) = value, !entries.isEmpty else {
            reader.fail([.key("weights")], ConfigSchema.retiredWeights)
            return
        }
        for (key, _) in entries {
            reader.fail([.key("weights"), .key(key)], ConfigSchema.retiredWeights)
        }
    }

    private mutating func eachTable(
        _ value: ConfigValue, _ name: String, _ body: (inout ConfigBuilder, [(key: String, value: ConfigValue)], Int) -> Void
    ) {
        guard case .array(let items) = value else {
            reader.fail([.key(name)], "\(name) must be written as [[\(name)]] tables, not \(value.typeName)")
            return
        }
        for (index, item) in items.enumerated() {
            let path: ConfigReader.Path = [.key(name), .element(index)]
            guard let entries = reader.table(item, path) else { continue }
            reader.checkKeys(entries, known: ConfigSchema.keys(inTable: "\(name)[]").map(\.name), at: path, what: "[[\(name)]]")
            body(&self, entries, index)
        }
    }

    private mutating func rule(_ entries: [(key: String, value: ConfigValue)], _ index: Int) {
        let base: ConfigReader.Path = [.key("rule"), .element(index)]
        var matches: [[PropertyMatch]]?
        var priority: Int?
        var ignore = false
        for (key, value) in entries {
            switch key {
            case "match": matches = reader.matchAlternatives(value, base + [.key(key)])
            case "priority": priority = reader.integer(value, base + [.key(key)], in: Self.priorities)
            case "ignore": ignore = reader.boolean(value, base + [.key(key)]) ?? false
            default: break
            }
        }
        let location = reader.locator.locate(base)
        // A match that was wrong has been reported already: one error per mistake.
        let hasMatch = entries.contains(where: { $0.key == "match" })
        guard let matches, !matches.isEmpty, !matches.contains(where: \.isEmpty) else {
            if !hasMatch || matches != nil {
                reader.fail(base, "a [[rule]] needs a non-empty match = { \"node.name\" = \"glob\" } (or match = [{ … }, { … }], any of which matches)")
            }
            return
        }
        if ignore, priority != nil {
            reader.fail(base + [.key("ignore")], "a [[rule]] either ignores (ignore = true) or sets a priority, not both")
            return
        }
        guard ignore || priority != nil else {
            if !entries.contains(where: { $0.key == "priority" }) {
                reader.fail(base, "a [[rule]] needs priority = N (\(Self.priorities.lowerBound) … \(Self.priorities.upperBound)) or ignore = true")
            }
            return
        }
        config.rules.append(NodeRule(anyOf: matches, action: ignore ? .ignore : .priority(priority ?? 0), location: location))
    }

    private mutating func accessory(_ entries: [(key: String, value: ConfigValue)], _ index: Int) {
        let base: ConfigReader.Path = [.key("accessory"), .element(index)]
        var entry = StaticAccessory()
        entry.location = reader.locator.locate(base)
        for (key, value) in entries {
            let path = base + [.key(key)]
            switch key {
            case "address":
                guard let text = reader.string(value, path) else { continue }
                if let address = BluetoothAddress(text) { entry.address = address } else {
                    reader.fail(path, "\(ConfigReader.dotted(path)): \"\(text)\" is not a Bluetooth address like AA:BB:CC:DD:EE:FF")
                }
            case "name": entry.name = reader.string(value, path).map(Glob.init)
            case "vendor-id": entry.vendorID = reader.string(value, path)
            case "product-id": entry.productID = reader.string(value, path)
            case "bus": entry.bus = reader.string(value, path)
            case "form-factor": entry.formFactor = reader.string(value, path)
            case "match": entry.properties = reader.matches(value, path) ?? []
            case "capabilities":
                guard let list = reader.parsedList(value, path, expected: "a capability (audio-switching)", { AccessoryCapability(rawValue: $0) }) else { continue }
                if list.contains(.placement) {
                    reader.fail(path, element: "placement", "a static [[accessory]] has no reporter to keep placement current: remove \"placement\", or register the accessory from a reporter")
                    continue
                }
                entry.capabilities = AccessoryCapabilities(list)
            case "reporter":
                guard let name = reader.string(value, path) else { continue }
                if ReporterName.isValid(name) { entry.reporter = name } else {
                    reader.fail(path, "\(ConfigReader.dotted(path)): \"\(name)\" is not a reverse-DNS reporter name like org.example.airpods-reporter")
                }
            default: break
            }
        }
        let descriptors: Set = ["address", "name", "vendor-id", "product-id", "bus", "form-factor", "match"]
        if !entries.contains(where: { descriptors.contains($0.key) }) {
            reader.fail(base, "an [[accessory]] needs at least one descriptor: address, name, vendor-id, product-id, bus, form-factor or match")
            return
        }
        config.accessories.append(entry)
    }
}
