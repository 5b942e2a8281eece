import AudioGraph
import RoutingPolicy
/// A tiny XML writer for SVG: every attribute value and every piece of text passes through
/// `escape`, so no node name can break the document. Elements are written one per line.
struct SVGWriter {
    private(set) var output = ""
    private var open: [String] = []
    private let depth: Int

    /// `declaration`: start with `<?xml …?>`; `depth`: the indentation of a fragment that
    /// `append` puts inside another writer's element.
    init(declaration: Bool = true, depth: Int = 0) {
        self.depth = depth
        if declaration { output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" }
    }

    /// Another writer's elements (all closed) inside the element open here.
    mutating func append(_ fragment: SVGWriter) {
        var fragment = fragment
        output += fragment.finish()
    }

    /// Starts `<name …>`; `close()` ends it.
    mutating func start(_ name: StaticString, _ attributes: [(StaticString, String)] = []) {
        output += indentation + "<\(name)" + Self.attributes(attributes) + ">\n"
        open.append("\(name)")
    }

    mutating func close() {
        guard let name = open.popLast() else { return }
        output += indentation + "</\(name)>\n"
    }

    /// `<name …/>`.
    mutating func empty(_ name: StaticString, _ attributes: [(StaticString, String)]) {
        output += indentation + "<\(name)" + Self.attributes(attributes) + "/>\n"
    }

    /// `<name …>text</name>`.
    mutating func text(_ name: StaticString, _ attributes: [(StaticString, String)] = [], _ content: String) {
        output += indentation + "<\(name)" + Self.attributes(attributes) + ">" + Self.escape(content) + "</\(name)>\n"
    }

    /// The document, every element closed.
    mutating func finish() -> String {
        while !open.isEmpty { close() }
        return output
    }

    private var indentation: String { String(repeating: " ", count: depth + open.count) }

    private static func attributes(_ attributes: [(StaticString, String)]) -> String {
        attributes.map { " \($0.0)=\"\(escape($0.1))\"" }.joined()
    }

    /// `& < > " '` as entities; characters XML 1.0 cannot carry at all (most C0 controls, lone
    /// surrogates cannot occur in a Swift String) as U+FFFD.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    result += "\u{FFFD}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// A coordinate with at most two decimals, the same text on every machine (no locale, no
    /// exponent): 12.5, 3, -0.25.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let hundredths = Int64((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = hundredths.magnitude
        let whole = magnitude / 100
        let fraction = magnitude % 100
        if fraction == 0 { return sign + "\(whole)" }
        if fraction % 10 == 0 { return sign + "\(whole).\(fraction / 10)" }
        return sign + "\(whole)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
