import Foundation

// usage: EarshotVersionGenerator VERSION-FILE OUTPUT.swift
// Run by EarshotVersionPlugin at build time: writes the `EarshotVersion` enum of
// EarshotCommands from the VERSION file. A VERSION that is not one Debian-style version
// (a digit first, then digits, letters and . + ~ -) fails the build with a message.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: EarshotVersionGenerator VERSION-FILE OUTPUT.swift\n".utf8))
    exit(2)
}
let text: String
do {
    text = try String(contentsOfFile: arguments[1], encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: cannot read \(arguments[1]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
let version = text.trimmingCharacters(in: .whitespacesAndNewlines)
let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~-")
guard let first = version.first, first.isASCII, first.isNumber, version.allSatisfy({ allowed.contains($0) }) else {
    FileHandle.standardError.write(Data("\(arguments[1]):1:1: error: VERSION must hold one version like 1.2.3 (a digit first, then digits, letters and . + ~ -), not \"\(version)\"\n".utf8))
    exit(1)
}
let source = """
    // Generated at build time from VERSION by EarshotVersionPlugin; do not edit.

    /// The version of this build: the repository's VERSION file.
    public enum EarshotVersion {
        public static let current = "\(version)"
    }

    """
do {
    // Rewritten only when the text changes, so an unchanged VERSION recompiles nothing.
    if (try? String(contentsOfFile: arguments[2], encoding: .utf8)) != source {
        try source.write(toFile: arguments[2], atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(arguments[2]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
