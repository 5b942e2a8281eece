import Foundation
import PipeWireTestSupport

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

    typealias Result = Shell.Result

    /// - Parameter removing: variables taken out of the inherited environment.
    static func run(_ arguments: [String], environment: [String: String] = [:], removing: [String] = []) throws -> Result {
        guard let url else { throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "earshot binary not found next to \(CommandLine.arguments[0])"]) }
        var env = ProcessInfo.processInfo.environment
        // A user's own config must not leak into the tests.
        env["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-tests-empty").path
        env.merge(environment) { _, new in new }
        for name in removing { env[name] = nil }
        return try Shell.run([url.path] + arguments, environment: env)
    }

    static func temporaryFile(_ name: String, _ contents: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
