/// Typed access to config values that records every mistake with its location instead of
/// stopping at the first.
struct ConfigReader {
    typealias Path = [TOMLKeyLocator.Component]
    let locator: TOMLKeyLocator
    private(set) var errors: [ConfigError] = []

    init(locator: TOMLKeyLocator) { self.locator = locator }

    static func dotted(_ path: Path) -> String {
        var text = ""
        for component in path {
            switch component {
            case .key(let name): text += (text.isEmpty ? "" : ".") + (name.contains("." as Character) ? "\"\(name)\"" : name)
            case .element(let index): text += "[\(index)]"
            }
        }
        return text
    }

    mutating func fail(_ path: Path, _ message: String) {
        errors.append(ConfigError(locator.locate(path), message))
    }

    mutating func fail(_ path: Path, element: String, occurrence: Int = 0, _ message: String) {
        errors.append(ConfigError(locator.locate(string: element, after: locator.locate(path), occurrence: occurrence), message))
    }

    /// Reports keys the schema does not know, with the closest known name.
    mutating func checkKeys(_ entries: [(key: String, value: ConfigValue)], known: [String], at path: Path, what: String) {
        for (key, _) in entries where !known.contains(key) {
            var hint = Suggestion.closest(to: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            if hint.isEmpty {
                // A key of another table written here (`off-grace` at the top level).
                let elsewhere = ConfigSchema.keys.filter { !$0.table.hasSuffix("[]") && !$0.table.isEmpty }
                if let name = Suggestion.closest(to: key, among: elsewhere.map(\.name)),
                    let other = elsewhere.first(where: { $0.name == name })
                {
                    hint = " (did you mean \"\(other.name)\" in [\(other.table)]?)"
                }
            }
            fail(path + [.key(key)], "unknown key \"\(key)\" in \(what)\(hint); known keys: \(known.joined(separator: ", "))")
        }
    }

    mutating func table(_ value: ConfigValue, _ path: Path) -> [(key: String, value: ConfigValue)]? {
        guard case .table(let entries) = value else {
            fail(path, "\(Self.dotted(path)) must be a table, not \(value.typeName)")
            return nil
        }
        return entries
    }

    mutating func integer(_ value: ConfigValue, _ path: Path, in range: ClosedRange<Int>) -> Int? {
        guard case .integer(let number) = value, range.contains(number) else {
            let got = if case .integer(let number) = value { "\(number)" } else { value.typeName }
            fail(path, "\(Self.dotted(path)) must be an integer in \(range.lowerBound) … \(range.upperBound), not \(got)")
            return nil
        }
        return number
    }

    mutating func boolean(_ value: ConfigValue, _ path: Path) -> Bool? {
        guard case .boolean(let flag) = value else {
            fail(path, "\(Self.dotted(path)) must be true or false, not \(value.typeName)")
            return nil
        }
        return flag
    }

    mutating func string(_ value: ConfigValue, _ path: Path) -> String? {
        guard case .string(let text) = value else {
            fail(path, "\(Self.dotted(path)) must be a string, not \(value.typeName)")
            return nil
        }
        return text
    }

    mutating func strings(_ value: ConfigValue, _ path: Path) -> [String]? {
        guard case .array(let items) = value else {
            fail(path, "\(Self.dotted(path)) must be an array of strings, not \(value.typeName)")
            return nil
        }
        var result: [String] = []
        for item in items {
            guard case .string(let text) = item else {
                fail(path, "\(Self.dotted(path)) must hold only strings, not \(item.typeName)")
                return nil
            }
            result.append(text)
        }
        return result
    }

    /// Strings that must each parse as `T`, with the bad one located in its array.
    mutating func parsedList<T>(_ value: ConfigValue, _ path: Path, expected: String, _ parse: (String) -> T?) -> [T]? {
        guard let texts = strings(value, path) else { return nil }
        var result: [T] = []
        var ok = true
        for text in texts {
            if let parsed = parse(text) { result.append(parsed) } else {
                fail(path, element: text, "\(Self.dotted(path)): \"\(text)\" is not \(expected)")
                ok = false
            }
        }
        return ok ? result : nil
    }

    /// `{ property = pattern, … }`; nil when anything in it was wrong (each mistake reported once).
    mutating func matches(_ value: ConfigValue, _ path: Path) -> [PropertyMatch]? {
        guard let entries = table(value, path) else { return nil }
        var result: [PropertyMatch] = []
        var ok = true
        for (key, value) in entries {
            let at = path + [.key(key)]
            switch value {
            case .string(let text):
                switch ValuePattern.parse(text) {
                case .success(let pattern): result.append(PropertyMatch(key: key, pattern: pattern))
                case .failure(let error):
                    fail(at, element: text, "\(Self.dotted(at)): \(error.message)")
                    ok = false
                }
            case .boolean(let set):
                result.append(PropertyMatch(key: key, pattern: set ? .not(.absent) : .absent))
            default:
                fail(at, "\(Self.dotted(at)) must be a string (a glob, \"~regex\" or \"!\" before either) or false (not set), not \(value.typeName)")
                ok = false
            }
        }
        return ok ? result : nil
    }

    /// A rule's `match`: one table, or an array of tables of which any may match.
    mutating func matchAlternatives(_ value: ConfigValue, _ path: Path) -> [[PropertyMatch]]? {
        guard case .array(let items) = value else { return matches(value, path).map { [$0] } }
        var result: [[PropertyMatch]] = []
        var ok = true
        for (index, item) in items.enumerated() {
            guard case .table = item else {
                fail(path, "\(Self.dotted(path))[\(index)] must be a table { property = pattern }, not \(item.typeName)")
                ok = false
                continue
            }
            if let table = matches(item, path + [.element(index)]) {
                if table.isEmpty {
                    fail(path, "\(Self.dotted(path))[\(index)] is empty: an empty table would match every sink")
                    ok = false
                } else {
                    result.append(table)
                }
            } else {
                ok = false
            }
        }
        return ok ? result : nil
    }

    /// A list of distinct sink classes (`class-order`, `personal-classes`): every unknown value
    /// and every repeat reported at its element.
    mutating func classes(_ value: ConfigValue, _ path: Path) -> [SinkClass]? {
        guard let texts = strings(value, path) else { return nil }
        let names = SinkClass.allCases.map(\.rawValue)
        var result: [SinkClass] = []
        var seen: [String: Int] = [:]
        var ok = true
        for text in texts {
            let occurrence = seen[text, default: 0]
            seen[text] = occurrence + 1
            guard let sinkClass = SinkClass(rawValue: text) else {
                if occurrence == 0 {
                    let hint = Suggestion.closest(to: text, among: names).map { " (did you mean \"\($0)\"?)" } ?? ""
                    fail(path, element: text, "\(Self.dotted(path)): \"\(text)\" is not a sink class\(hint); the classes are \(names.joined(separator: ", "))")
                }
                ok = false
                continue
            }
            if occurrence > 0 {
                if occurrence == 1 {
                    fail(path, element: text, occurrence: 1, "\(Self.dotted(path)) lists \"\(text)\" twice; list each class once")
                }
                ok = false
                continue
            }
            result.append(sinkClass)
        }
        return ok ? result : nil
    }

    /// `tier-order`: every tier exactly once, each mistake located at its element.
    mutating func tiers(_ value: ConfigValue, _ path: Path) -> [RankTier]? {
        guard let texts = strings(value, path) else { return nil }
        let names = RankTier.allCases.map(\.rawValue)
        var result: [RankTier] = []
        var ok = true
        for text in texts {
            guard let tier = RankTier(rawValue: text) else {
                let hint = Suggestion.closest(to: text, among: names).map { " (did you mean \"\($0)\"?)" } ?? ""
                fail(path, element: text, "\(Self.dotted(path)): \"\(text)\" is not a tier\(hint); the tiers are \(names.joined(separator: ", "))")
                ok = false
                continue
            }
            if result.contains(tier) {
                fail(path, element: text, occurrence: 1, "\(Self.dotted(path)) lists \"\(text)\" twice; list every tier exactly once")
                ok = false
                continue
            }
            result.append(tier)
        }
        guard ok else { return nil }
        // A list written before session-priority existed (0.2 and earlier) keeps working: the
        // new tier goes where the default order puts it, right after class-order (CHANGES.md).
        if !result.contains(.sessionPriority), let classOrder = result.firstIndex(of: .classOrder),
            RankTier.allCases.allSatisfy({ $0 == .sessionPriority || result.contains($0) })
        {
            result.insert(.sessionPriority, at: classOrder + 1)
        }
        let missing = RankTier.allCases.filter { !result.contains($0) }
        guard missing.isEmpty else {
            fail(path, "\(Self.dotted(path)) must list every tier exactly once; missing \(missing.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            return nil
        }
        return result
    }
}
