/// A shell-style pattern over property values: `*` any run, `?` one character, anything else
/// itself. A pattern without wildcards is plain equality.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let bytes: [UInt8]
    private let isLiteral: Bool

    public init(_ pattern: String) {
        self.pattern = pattern
        bytes = Array(pattern.utf8)
        isLiteral = !bytes.contains(UInt8(ascii: "*")) && !bytes.contains(UInt8(ascii: "?"))
    }

    public var description: String { pattern }

    public func matches(_ text: String) -> Bool {
        if isLiteral { return text == pattern }
        var text = text
        return text.withUTF8 { Self.match(bytes, $0) }
    }

    /// Iterative matcher with single-star backtracking: linear for the patterns people write.
    private static func match(_ pattern: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let star = UInt8(ascii: "*"), any = UInt8(ascii: "?")
        var p = 0, t = 0
        var starAt = -1, resumeAt = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == any || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == star {
                starAt = p
                resumeAt = t
                p += 1
            } else if starAt >= 0 {
                p = starAt + 1
                resumeAt += 1
                t = resumeAt
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == star { p += 1 }
        return p == pattern.count
    }
}
