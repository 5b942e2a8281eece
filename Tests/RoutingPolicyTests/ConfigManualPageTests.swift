import Testing

@testable import RoutingPolicy

/// earshot.toml(5), rendered from the schema (`earshot config show --schema --format man`).
@Suite struct ConfigManualPageTests {
    let page = ConfigManualPage.render(version: "9.8.7", date: "2026-01-02")
    var lines: [String] { page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test func headerNamesPageSectionDateAndVersion() {
        #expect(lines.first == ".TH EARSHOT.TOML 5 \"2026\\-01\\-02\" \"earshot 9.8.7\" \"Earshot Manual\"")
        #expect(page.hasSuffix("\n"))
        // The whatis line man-db and lintian read: "name \- summary" right after .SH NAME.
        let name = lines.firstIndex(of: ".SH NAME")
        #expect(name != nil)
        if let name { #expect(lines[name + 1].hasPrefix("earshot.toml \\- ")) }
        for section in [".SH SYNOPSIS", ".SH DESCRIPTION", ".SH KEYS", ".SH FILES", ".SH SEE ALSO"] {
            #expect(lines.contains(section), "\(section)")
        }
    }

    @Test func everyKeyIsListedUnderItsTableWithTypeDefaultAndMeaning() throws {
        var table = ""
        var seen: [String] = []
        for (index, line) in lines.enumerated() {
            if line.hasPrefix(".SS ") { table = String(line.dropFirst(4)) }
            guard line.hasPrefix(".B "), index > 0, lines[index - 1] == ".TP", index + 3 < lines.count else { continue }
            let name = String(line.dropFirst(3))
            guard let key = ConfigSchema.keys.first(where: { ConfigManualPage.escape($0.name) == name && ConfigManualPage.escape(ConfigManualPage.heading($0.table)) == table })
            else {
                if table != "" && lines[index + 1].hasPrefix(".I") { continue }  // FILES entries
                Issue.record("\(name) under \(table) is no schema key")
                continue
            }
            seen.append(key.path)
            #expect(lines[index + 1].contains(ConfigManualPage.escape(key.type)), "\(key.path)")
            #expect(lines[index + 1].contains("default \\fB\(ConfigManualPage.escape(key.defaultValue))\\fR"), "\(key.path)")
            #expect(lines[index + 3] == ConfigManualPage.escape(key.meaning), "\(key.path)")
        }
        #expect(seen == ConfigSchema.keys.map(\.path))
        #expect(lines.contains(".SS [timing]"))
        #expect(lines.contains(".SS [[rule]]"))
        #expect(lines.contains(".SS Top level"))
    }

    @Test func noTextLineIsReadAsARequest() {
        let macros: Set<String> = [".TH", ".SH", ".SS", ".TP", ".B", ".BR", ".I", ".IR", ".br", ".PP"]
        for line in lines where line.hasPrefix(".") || line.hasPrefix("'") {
            let macro = String(line.prefix { $0 != " " })
            #expect(macros.contains(macro), "\(line)")
        }
    }

    @Test func escaping() {
        #expect(ConfigManualPage.escape("a-b\\c") == "a\\-b\\ec")
        #expect(ConfigManualPage.escape(".hidden") == "\\&.hidden")
        #expect(ConfigManualPage.escape("'quote") == "\\&'quote")
        #expect(ConfigManualPage.quoted("say \"hi\"") == "\"say \\(dqhi\\(dq\"")
        #expect(ConfigManualPage.heading("") == "Top level")
        #expect(ConfigManualPage.heading("rule[]") == "[[rule]]")
        #expect(ConfigManualPage.heading("playback") == "[playback]")
    }
}
