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
            case .key(let name): text += (text.isEmpty ? "" : ".") + (name.contains(".") ? "\"\(name)\"" : name)
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
            let hint = Suggestion.closest(to: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
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

    /// `{ property = glob, … }`.
    mutating func matches(_ value: ConfigValue, _ path: Path) -> [PropertyMatch]? {
        guard let entries = table(value, path) else { return nil }
        var result: [PropertyMatch] = []
        for (key, value) in entries {
            guard case .string(let pattern) = value else {
                fail(path + [.key(key)], "\(Self.dotted(path + [.key(key)])) must be a string (a glob), not \(value.typeName)")
                continue
            }
            result.append(PropertyMatch(key: key, glob: Glob(pattern)))
        }
        return result
    }

    /// A list of distinct sink classes (`class-order`, `personal-classes`).
    mutating func classes(_ value: ConfigValue, _ path: Path) -> [SinkClass]? {
        let expected = "a sink class (\(SinkClass.allCases.map(\.rawValue).joined(separator: ", ")))"
        guard let list = parsedList(value, path, expected: expected, { SinkClass(rawValue: $0) }) else { return nil }
        if Set(list).count != list.count {
            fail(path, "\(Self.dotted(path)) lists a class twice")
            return nil
        }
        return list
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
        let missing = RankTier.allCases.filter { !result.contains($0) }
        guard missing.isEmpty else {
            fail(path, "\(Self.dotted(path)) must list every tier exactly once; missing \(missing.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            return nil
        }
        return result
    }
}
