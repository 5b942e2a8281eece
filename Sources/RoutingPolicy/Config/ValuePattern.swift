import FoundationEssentials

/// What a match value says about a property, in WirePlumber's conventions (docs/policy.md, Match values):
/// a glob (`*`, `?`), `~` then a regular expression, `!` before either to negate it, and `false`
/// for a property that is not set (`true`: set, to any value).
public indirect enum ValuePattern: Sendable, Hashable, CustomStringConvertible {
    case glob(Glob)
    case regex(PropertyRegex)
    /// The property is not set on the node nor its device.
    case absent
    /// The property is absent or does not match.
    case not(ValuePattern)

    /// Parses a string value; the message says what is wrong with one that is not a pattern.
    public static func parse(_ text: String) -> Result<ValuePattern, PatternError> {
        if text.hasPrefix("!") {
            let rest = String(text.dropFirst())
            if rest.isEmpty { return .failure(PatternError("\"!\" negates a pattern and needs one after it, e.g. \"!*hdmi*\"")) }
            if rest.hasPrefix("!") { return .failure(PatternError("\"!!\" is a double negation: write the pattern without both")) }
            return parse(rest).map { .not($0) }
        }
        if text.hasPrefix("~") {
            let source = String(text.dropFirst())
            if source.isEmpty { return .failure(PatternError("\"~\" starts a regular expression and needs one after it, e.g. \"~alsa_output\\\\..*\"")) }
            do {
                return .success(.regex(try PropertyRegex(source)))
            } catch {
                return .failure(PatternError("\"\(source)\" is not a regular expression (\(error.message))"))
            }
        }
        if let character = text.first(where: { "[]{}\\|".contains($0) }) {
            return .failure(PatternError(
                "\"\(character)\" is not glob syntax (a glob has only * and ?): for a regular expression write \"~\(text)\", for the character itself use ? or a regular expression"))
        }
        return .success(.glob(Glob(text)))
    }

    /// Whether a property with `value` (nil: not set) matches.
    public func holds(_ value: String?) -> Bool {
        switch self {
        case .glob(let glob): value.map(glob.matches) ?? false
        case .regex(let regex): value.map(regex.matches) ?? false
        case .absent: value == nil
        case .not(let inner): !inner.holds(value)
        }
    }

    /// As written in TOML (a quoted string, or `false` / `true`).
    public var toml: String {
        switch self {
        case .absent: "false"
        case .not(.absent): "true"
        default: ConfigRenderer.quoted(description)
        }
    }

    public var description: String {
        switch self {
        case .glob(let glob): glob.pattern
        case .regex(let regex): "~" + regex.source
        case .absent: "false"
        case .not(.absent): "true"
        case .not(let inner): "!" + inner.description
        }
    }
}

public struct PatternError: Error, Sendable {
    public let message: String
    init(_ message: String) { self.message = message }
}

/// A regular expression over a property value, searched anywhere in it (unanchored, as PipeWire
/// and WirePlumber do: write `^…$` to match the whole value).
public struct PropertyRegex: Sendable, Hashable {
    public let source: String
    private let box: Box

    /// A compiled Swift `Regex` (the standard library's engine: no Foundation, no ICU), used
    /// only for matching, which does not change it.
    private final class Box: @unchecked Sendable {
        let expression: Regex<AnyRegexOutput>
        init(_ expression: Regex<AnyRegexOutput>) { self.expression = expression }
    }

    public init(_ source: String) throws(PatternError) {
        self.source = source
        do {
            box = Box(try Regex(source))
        } catch {
            throw PatternError("regular expression syntax (Swift Regex, PCRE-like: \(error))")
        }
    }

    public func matches(_ text: String) -> Bool {
        text.firstMatch(of: box.expression) != nil
    }

    public static func == (lhs: PropertyRegex, rhs: PropertyRegex) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
