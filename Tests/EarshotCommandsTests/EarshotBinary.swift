import Foundation

/// Runs the built `earshot` executable, which SwiftPM puts next to the test bundle
/// (`.build*/debug/earshot`).
enum EarshotBinary {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repository.appendingPathComponent("Tests/RoutingPolicyTests/Fixtures")

    static var url: URL? {
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            argument0, Bundle.main.bundleURL, Bundle.main.executableURL?.deletingLastPathComponent(),
        ].compactMap { $0 }.flatMap { [$0.appendingPathComponent("earshot"), $0.deletingLastPathComponent().appendingPathComponent("earshot")] }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// - Parameter removing: variables taken out of the inherited environment.
    static func run(_ arguments: [String], environment: [String: String] = [:], removing: [String] = []) throws -> Result {
        guard let url else { throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "earshot binary not found next to \(CommandLine.arguments[0])"]) }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        // A user's own config must not leak into the tests.
        env["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-tests-empty").path
        env.merge(environment) { _, new in new }
        for name in removing { env[name] = nil }
        process.environment = env
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read before waiting: a full pipe would block the child.
        // The throwing readers: an interrupted read fails this test instead of the whole run.
        let out = try output.fileHandleForReading.readToEnd() ?? Data()
        let err = try error.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self), standardError: String(decoding: err, as: UTF8.self))
    }

    static func temporaryFile(_ name: String, _ contents: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
