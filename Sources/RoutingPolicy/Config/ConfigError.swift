/// One mistake in a config file, at the line and column of the key (or value) at fault.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String

    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

/// Every mistake found in one file, in file order.
public struct ConfigErrors: Error, Sendable, Hashable, CustomStringConvertible {
    public var errors: [ConfigError]
    public init(_ errors: [ConfigError]) { self.errors = errors.sorted { $0.location < $1.location } }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// "did you mean …": the closest known name within two edits.
enum Suggestion {
    static func closest(to name: String, among candidates: [String]) -> String? {
        // A name missing its unit or suffix (`off-grace` for `off-grace-ms`) is the closest of all.
        if name.count >= 3, let extended = candidates.filter({ $0.hasPrefix(name) }).min(by: { $0.count < $1.count }) {
            return extended
        }
        let scored = candidates.map { ($0, distance(name, $0)) }.filter { $0.1 <= max(2, name.count / 4) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
