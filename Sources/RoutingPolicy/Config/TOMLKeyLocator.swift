import FoundationEssentials

/// Finds where a key is written in a TOML file. TOMLKit reports positions only for syntax
/// errors, so for unknown keys and bad values this looks the key path up in the text: the table
/// header (`[timing]`, the n-th `[[rule]]`), then the line that assigns the key. It reads only
/// header and key names, never values; when it cannot tell, it falls back to the enclosing
/// header or the file's start.
struct TOMLKeyLocator {
    enum Component: Hashable {
        case key(String)
        /// The n-th (0-based) table of an array of tables.
        case element(Int)
    }

    let file: String
    private let lines: [String]
    /// Every header line, in file order, read once: looking a table up never rescans the file.
    private let headers: [(line: Int, name: String, isArray: Bool)]
    /// For each (name, isArray), the indices into `headers` of its occurrences.
    private let headerIndex: [HeaderKey: [Int]]
    /// Lines examined so far (the index, then each lookup): for tests of linearity.
    var linesExamined: Int { work.lines }
    private let work = WorkCount()

    private final class WorkCount {
        var lines = 0
    }

    private struct HeaderKey: Hashable {
        let name: String
        let isArray: Bool
    }

    init(file: String, text: String) {
        self.file = file
        lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
        var headers: [(line: Int, name: String, isArray: Bool)] = []
        var index: [HeaderKey: [Int]] = [:]
        for (number, line) in lines.enumerated() {
            guard let header = Self.headerName(line) else { continue }
            index[HeaderKey(name: header.name, isArray: header.isArray), default: []].append(headers.count)
            headers.append((number, header.name, header.isArray))
        }
        self.headers = headers
        headerIndex = index
        work.lines = lines.count
    }

    func locate(_ path: [Component]) -> SourceLocation {
        var remaining = path[...]
        var section = rootSection
        var fallback = SourceLocation(file: file, line: 1, column: 1)
        if case .key(let name)? = remaining.first {
            if remaining.count >= 2, case .element(let index) = remaining[remaining.startIndex + 1],
                let found = header(name, arrayOfTables: true, occurrence: index)
            {
                section = found.section
                fallback = found.location
                remaining = remaining.dropFirst(2)
            } else if remaining.count >= 2, let found = header(name, arrayOfTables: false, occurrence: 0) {
                section = found.section
                fallback = found.location
                remaining = remaining.dropFirst()
            }
        }
        var searchFrom = section.lowerBound
        var result = fallback
        var first = true
        for component in remaining {
            guard case .key(let name) = component else { continue }
            guard let found = assignment(of: name, in: searchFrom..<section.upperBound, atLineStart: first) else {
                // An unknown table is written as a header, not an assignment.
                if first, remaining.count == 1 {
                    return (header(name, arrayOfTables: false, occurrence: 0) ?? header(name, arrayOfTables: true, occurrence: 0))?.location ?? result
                }
                return result
            }
            result = found
            searchFrom = found.line - 1
            first = false
        }
        return result
    }

    /// Where `value` (a string element) is written after `location`, for array elements; with
    /// `occurrence` n, its (n+1)-th spelling (a value listed twice).
    func locate(string value: String, after location: SourceLocation, occurrence: Int = 0) -> SourceLocation {
        var skip = occurrence
        for index in (location.line - 1)..<min(lines.count, location.line + 20) {
            let line = lines[index]
            var found: [(column: Int, range: Range<String.Index>)] = []
            for quoted in ["\"\(value)\"", "'\(value)'"] {
                var start = line.startIndex
                while let range = line[start..<line.endIndex].firstRange(of: quoted) {
                    found.append((line.distance(from: line.startIndex, to: range.lowerBound) + 1, range))
                    start = range.upperBound
                }
            }
            for (column, _) in found.sorted(by: { $0.column < $1.column }) where index > location.line - 1 || column > location.column {
                if skip == 0 { return SourceLocation(file: file, line: index + 1, column: column) }
                skip -= 1
            }
        }
        return location
    }

    private var rootSection: Range<Int> {
        0..<(headers.first?.line ?? lines.count)
    }

    private func header(_ name: String, arrayOfTables: Bool, occurrence: Int) -> (section: Range<Int>, location: SourceLocation)? {
        guard let occurrences = headerIndex[HeaderKey(name: name, isArray: arrayOfTables)], occurrence < occurrences.count else { return nil }
        let position = occurrences[occurrence]
        let index = headers[position].line
        let end = position + 1 < headers.count ? headers[position + 1].line : lines.count
        let line = lines[index]
        let column = line.prefix { $0 == " " || $0 == "\t" }.count + 1
        return ((index + 1)..<end, SourceLocation(file: file, line: index + 1, column: column))
    }

    /// A line `name = …` (or `name.sub = …`); inside an inline table, `name` may follow other text.
    private func assignment(of name: String, in range: Range<Int>, atLineStart: Bool) -> SourceLocation? {
        let spellings = [name, "\"\(name)\"", "'\(name)'"]
        for index in range where index < lines.count {
            work.lines += 1
            let line = lines[index]
            if line.trimmingLeadingWhitespace.hasPrefix("#") { continue }
            var searchStart = line.startIndex
            while searchStart < line.endIndex {
                var best: (Range<String.Index>, String)?
                for spelling in spellings {
                    if let found = line[searchStart..<line.endIndex].firstRange(of: spelling),
                        best == nil || found.lowerBound < best!.0.lowerBound
                    {
                        best = (found, spelling)
                    }
                }
                guard let (found, _) = best else { break }
                let before = line[line.startIndex..<found.lowerBound]
                let after = line[found.upperBound...].drop { $0 == " " || $0 == "\t" }
                let startsKey = atLineStart
                    ? before.allSatisfy { $0 == " " || $0 == "\t" }
                    : before.last.map { " \t{,".contains($0) } ?? true
                if startsKey, after.first == "=" || after.first == "." {
                    return SourceLocation(file: file, line: index + 1, column: line.distance(from: line.startIndex, to: found.lowerBound) + 1)
                }
                searchStart = found.upperBound
            }
        }
        return nil
    }

    private static func headerName(_ line: String) -> (name: String, isArray: Bool)? {
        let trimmed = line.trimmingLeadingWhitespace
        guard trimmed.hasPrefix("[") else { return nil }
        let isArray = trimmed.hasPrefix("[[")
        let open = isArray ? 2 : 1
        guard let close = trimmed.firstIndex(of: "]") else { return nil }
        let inner = trimmed[trimmed.index(trimmed.startIndex, offsetBy: open)..<close]
        let name = inner.filter { $0 != " " && $0 != "\t" && $0 != "\"" && $0 != "'" }
        return (String(name), isArray)
    }
}

extension String {
    var trimmingLeadingWhitespace: Substring { drop { $0 == " " || $0 == "\t" } }
}
