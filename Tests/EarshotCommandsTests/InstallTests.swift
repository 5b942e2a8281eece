@testable import EarshotCommands
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// `scripts/install` into temporary HOME/XDG dirs (with the test build's binary, so no release
/// build is needed here), then the installed systemd user unit through `systemd-analyze verify`.
@Suite("scripts/install", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct InstallTests {
    @Test("installs binary, unit, config and completions into the XDG paths; the unit passes systemd-analyze verify")
    func install() throws {
        let home = try Home()
        defer { home.remove() }
        let result = try home.install()
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")

        let binary = home.prefix.appendingPathComponent("bin/earshot")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))
        let version = try Shell.run([binary.path, "--version"], environment: home.environment)
        #expect(version.standardOutput == EarshotVersion.current + "\n")
        // The daemon in the prefix's libexec, where `earshot daemon` finds it.
        let daemon = home.prefix.appendingPathComponent("libexec/earshotd")
        #expect(try Shell.run([daemon.path, "--version"], environment: home.environment).standardOutput == EarshotVersion.current + "\n")

        let unit = try String(contentsOf: home.unit, encoding: .utf8)
        let lines = Set(unit.split(separator: "\n").map(String.init))
        for expected in [
            "After=pipewire.service wireplumber.service", "Wants=pipewire.service", "Restart=on-failure",
            "ExecStart=\(daemon.path)", "ExecReload=/bin/kill -HUP $MAINPID", "WantedBy=default.target",
        ] {
            #expect(lines.contains(expected), "\(expected) missing from\n\(unit)")
        }
        #expect(!unit.contains("@DAEMON@") && !unit.contains("@BINDIR@"))

        let config = home.config.appendingPathComponent("earshot/earshot.toml")
        let shipped = EarshotBinary.repository.appendingPathComponent("config/earshot.toml")
        #expect(try Data(contentsOf: config) == Data(contentsOf: shipped))

        for (file, marker) in [
            (home.data.appendingPathComponent("bash-completion/completions/earshot"), "complete -o filenames -F _earshot earshot"),
            (home.data.appendingPathComponent("zsh/site-functions/_earshot"), "#compdef earshot"),
            (home.config.appendingPathComponent("fish/completions/earshot.fish"), "complete -c 'earshot'"),
        ] {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains(marker), "\(file.path)")
            #expect(text.contains("report"), "\(file.path) lacks the report command")
        }

        let system = try Shell.run(["systemd-analyze", "verify", home.unit.path], environment: home.environment)
        #expect(system.status == 0 && system.standardError.isEmpty, "\(system.standardError)")
        let user = try Shell.run(["systemd-analyze", "--user", "verify", home.unit.path], environment: home.environment)
        #expect(user.status == 0 && user.standardError.isEmpty, "\(user.standardError)")
    }

    @Test("systemd-analyze verify does complain about a broken copy (so the check above can fail)")
    func verifyCatchesMistakes() throws {
        let home = try Home()
        defer { home.remove() }
        #expect(try home.install().status == 0)
        let broken = home.root.appendingPathComponent("earshot.service")
        let unit = try String(contentsOf: home.unit, encoding: .utf8)
        try unit.replacingOccurrences(of: "Restart=on-failure", with: "Restart=sometimes")
            .replacingOccurrences(of: home.prefix.appendingPathComponent("libexec/earshotd").path, with: home.root.appendingPathComponent("missing/earshotd").path)
            .write(to: broken, atomically: true, encoding: .utf8)
        let result = try Shell.run(["systemd-analyze", "verify", broken.path], environment: home.environment)
        #expect(result.standardError.contains("restart specifier"), "\(result.standardError)")
        #expect(result.status != 0, "a missing ExecStart binary fails: \(result.standardError)")
    }

    @Test("installing again keeps an existing config and replaces the binary")
    func keepsConfig() throws {
        let home = try Home()
        defer { home.remove() }
        let config = home.config.appendingPathComponent("earshot/earshot.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "# mine\n".write(to: config, atomically: true, encoding: .utf8)
        let first = try home.install()
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("kept your \(config.path)"))
        #expect(try home.install().status == 0)
        #expect(try String(contentsOf: config, encoding: .utf8) == "# mine\n")
    }

    @Test("unknown arguments are a usage error")
    func usage() throws {
        let home = try Home()
        defer { home.remove() }
        let result = try Shell.run([Home.script, "--bogus"], environment: home.environment)
        #expect(result.status == 2)
        #expect(result.standardError.contains("unknown argument: --bogus"))
    }
}

/// A throwaway HOME with its own XDG dirs and a prefix.
private struct Home {
    static let script = EarshotBinary.repository.appendingPathComponent("scripts/install").path

    let root: URL
    var prefix: URL { root.appendingPathComponent("prefix") }
    var config: URL { root.appendingPathComponent("config") }
    var data: URL { root.appendingPathComponent("data") }
    var unit: URL { config.appendingPathComponent("systemd/user/earshot.service") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-install-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("runtime"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = root.appendingPathComponent("home").path
        environment["XDG_CONFIG_HOME"] = config.path
        environment["XDG_DATA_HOME"] = data.path
        environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("runtime").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(root.path)/no-bus"
        return environment
    }

    func install() throws -> Shell.Result {
        guard let binary = EarshotBinary.url?.path else { throw CocoaError(.fileNoSuchFile) }
        return try Shell.run([Self.script, "--prefix", prefix.path, "--binary", binary], environment: environment)
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}
