@testable import EarshotCommands
import Foundation
import RoutingPolicy
import SystemBridge
import Testing

/// The client's config reading (SystemBridge's `InputFile`, then RoutingPolicy's parser): what
/// a search finds, and what is too large to read.
struct ConfigFileReadingTests {
    /// Issue 21: a symbolic link at a search path is the user's config even when it leads
    /// nowhere: it is chosen (and fails to load), never passed over for the built-in defaults.
    @Test func aDanglingOrLoopingLinkIsChosenAndUnreadable() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-link-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("earshot"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("earshot/earshot.toml").path
        let env = ["XDG_CONFIG_HOME": root.path]
        #expect(ConfigSource.resolve(explicit: nil, environment: env, fileExists: InputFile.nameExists) != .file(path))
        for (target, reason) in [(root.appendingPathComponent("moved-away.toml").path, "No such file or directory"), (path, "Too many levels of symbolic links")] {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let source = ConfigSource.resolve(explicit: nil, environment: env, fileExists: InputFile.nameExists)
            #expect(source == .file(path))
            #expect(throws: ConfigErrors.self) { try source.load() }
            do throws(ConfigErrors) {
                _ = try source.load()
            } catch {
                #expect(error.description == "\(path):1:1: cannot read the file: \(reason)")
            }
        }
    }

    /// Issue 21: a config over 16 MiB is refused with its size, unread (a sparse 1 GiB file
    /// takes no time); a pipe with more than 16 MiB is read only up to the limit.
    @Test func aHugeConfigIsRefusedWithItsSize() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-huge-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("huge.toml").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        #expect(PolicyConfigLoader.sizeLimit == 16 << 20)
        let started = ContinuousClock.now
        do throws(ConfigErrors) {
            _ = try ConfigSource.file(path).load()
            Issue.record("a 1 GiB config loaded")
        } catch {
            #expect(error.description == "\(path):1:1: cannot read the file: it is 1073741824 bytes, over the limit of 16 MiB")
        }
        #expect(started.duration(to: .now) < .seconds(2))
        #expect(throws: InputFile.Failure.self) { try InputFile.bytes("/dev/zero", limit: 1000) }
        do {
            _ = try InputFile.bytes("/dev/zero", limit: 1 << 20)
        } catch {
            #expect(error.reason == "it has more than 1 MiB, the limit")
        }
    }
}
