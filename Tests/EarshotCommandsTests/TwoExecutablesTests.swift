import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

/// Issue 22: `earshot` (the client) links nothing of the daemon; `earshotd` is the daemon, and
/// `earshot daemon` hands over to it with the same command line.
@Suite("Two executables", .blockingCalls)
struct TwoExecutablesTests {
    static func daemonURL() throws -> URL {
        guard let client = EarshotBinary.url else { throw FixtureError("earshot binary not built") }
        let daemon = client.deletingLastPathComponent().appendingPathComponent("earshotd")
        guard FileManager.default.isExecutableFile(atPath: daemon.path) else { throw FixtureError("earshotd not built beside \(client.path)") }
        return daemon
    }

    /// How many symbols of `module` (as Swift mangles a module name: its length, then it) the
    /// binary at `path` holds.
    static func symbols(of module: String, in path: String) throws -> Int {
        let result = try Shell.run(["nm", "--defined-only", path], environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw FixtureError("nm \(path): \(result.standardError)") }
        let mangled = "\(module.utf8.count)\(module)"
        return result.standardOutput.split(separator: "\n").count { $0.contains(mangled) }
    }

    /// References to Foundation proper (not FoundationEssentials): what makes a static binary
    /// carry Foundation and ICU.
    static func foundationReferences(in path: String) throws -> Int {
        let result = try Shell.run(["nm", path], environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw FixtureError("nm \(path): \(result.standardError)") }
        return result.standardOutput.split(separator: "\n").count { line in
            line.contains("$s10Foundation") || line.contains("$sSy10Foundation") || line.contains("10FoundationE")
        }
    }

    @Test("neither executable refers to anything of Foundation proper (FoundationEssentials at most): no Foundation or ICU in their static builds")
    func noFoundation() throws {
        #expect(try Self.foundationReferences(in: try Self.daemonURL().path) == 0)
        #expect(try Self.foundationReferences(in: try #require(EarshotBinary.url).path) == 0)
    }

    @Test("the client links nothing of the daemon (no EarshotDaemon); the daemon executable does; neither links SwiftNIO (the control socket runs on dispatch sources)")
    func clientLinksNoDaemon() throws {
        let client = try #require(EarshotBinary.url).path
        let daemon = try Self.daemonURL().path
        #expect(try Self.symbols(of: "EarshotDaemon", in: client) == 0)
        for module in ["NIOCore", "NIOPosix"] {
            #expect(try Self.symbols(of: module, in: client) == 0)
            #expect(try Self.symbols(of: module, in: daemon) == 0)
        }
        #expect(try Self.symbols(of: "ControlProtocol", in: client) > 0)
        #expect(try Self.symbols(of: "EarshotDaemon", in: daemon) > 0)
        let sizes = try [client, daemon].map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int ?? 0 }
        print("two executables (debug build): earshot \(sizes[0] / 1024) KiB, earshotd \(sizes[1] / 1024) KiB")
    }

    @Test("the daemon links nothing of eval (no PolicyEval: no timeline, no SVG renderer, no workloads); the client does")
    func daemonLinksNoEval() throws {
        #expect(try Self.symbols(of: "PolicyEval", in: try Self.daemonURL().path) == 0)
        #expect(try Self.symbols(of: "PolicyEval", in: try #require(EarshotBinary.url).path) > 0)
    }

    /// The shared objects `path` needs (its DT_NEEDED entries).
    static func neededLibraries(of path: String) throws -> [String] {
        let result = try Shell.run(["readelf", "-d", path], environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw FixtureError("readelf -d \(path): \(result.standardError)") }
        return result.standardOutput.split(separator: "\n").compactMap { line in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    @Test("the client needs neither libpipewire nor libsystemd (bound late, loaded by the first call: graph loads libpipewire, a command that never reaches PipeWire loads neither); the daemon needs both")
    func clientBindsLibrariesLate() throws {
        let client = try #require(EarshotBinary.url).path
        let clientNeeds = try Self.neededLibraries(of: client)
        #expect(!clientNeeds.isEmpty)
        #expect(!clientNeeds.contains { $0.hasPrefix("libpipewire") || $0.hasPrefix("libsystemd") }, "\(clientNeeds)")
        let daemonNeeds = try Self.neededLibraries(of: try Self.daemonURL().path)
        #expect(daemonNeeds.contains("libpipewire-0.3.so.0") && daemonNeeds.contains("libsystemd.so.0"), "\(daemonNeeds)")

        // The loader's own account (LD_DEBUG=files goes to stderr).
        let version = try EarshotBinary.run(["--version"], environment: ["LD_DEBUG": "files"])
        #expect(version.status == 0)
        #expect(!version.standardError.contains("libpipewire") && !version.standardError.contains("libsystemd"), "\(version.standardError)")
        let graph = try EarshotBinary.run(["graph"], environment: [
            "LD_DEBUG": "files", "XDG_RUNTIME_DIR": "/nonexistent-earshot", "PIPEWIRE_REMOTE": "/nonexistent-earshot/pipewire-0",
        ])
        // Loaded on demand, then the same refusal as before: no PipeWire there, exit 3.
        #expect(graph.status == 3)
        #expect(graph.standardError.contains("file=libpipewire-0.3.so.0") && graph.standardError.contains("dynamically loaded"), "\(graph.standardError.suffix(2000))")
        #expect(graph.standardError.contains("cannot connect to PipeWire"))
        // (PipeWire's own D-Bus plugin may bring libsystemd in through libdbus; the client's late
        // binding never opens it for graph.)
        #expect(!graph.standardError.contains("file=libsystemd.so.0 [0];  dynamically loaded"))
    }

    @Test("a libpipewire the client cannot load is said with the loader's reason, exit 3 (as PipeWire not reachable)")
    func unloadableLibrary() throws {
        // The loader looks in LD_LIBRARY_PATH first: a file there by the library's name that is
        // no shared object stands for a broken or missing installation.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-late-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("not a shared object\n".utf8).write(to: directory.appendingPathComponent("libpipewire-0.3.so.0"))
        let graph = try EarshotBinary.run(["graph"], environment: ["LD_LIBRARY_PATH": directory.path])
        #expect(graph.status == 3, "\(graph.standardError)")
        #expect(graph.standardError.hasPrefix("earshot: cannot load libpipewire-0.3.so.0: "), "\(graph.standardError)")
        #expect(graph.standardError.contains(directory.path), "the loader's reason names the file: \(graph.standardError)")
        // A command that never reaches PipeWire does not notice.
        #expect(try EarshotBinary.run(["--version"], environment: ["LD_LIBRARY_PATH": directory.path]).status == 0)
    }

    @Test("earshot daemon and earshotd take the same options and refuse the same way")
    func sameCommandLine() throws {
        let daemon = try Self.daemonURL().path
        func run(_ arguments: [String], viaClient: Bool, removing: [String] = []) throws -> Shell.Result {
            if viaClient { return try EarshotBinary.run(["daemon"] + arguments, removing: removing) }
            var environment = ProcessInfo.processInfo.environment
            for name in removing { environment[name] = nil }
            return try Shell.run([daemon] + arguments, environment: environment)
        }
        // The options part of the help is the same declaration (DaemonArguments).
        func options(_ help: String) -> [String] {
            Array(help.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("OPTIONS:") }.map(String.init))
        }
        let clientHelp = try run(["--help"], viaClient: true)
        let daemonHelp = try run(["--help"], viaClient: false)
        #expect(clientHelp.status == 0 && daemonHelp.status == 0)
        #expect(!options(clientHelp.standardOutput).isEmpty)
        #expect(options(clientHelp.standardOutput).filter { !$0.contains("--version") } == options(daemonHelp.standardOutput).filter { !$0.contains("--version") })
        // No runtime directory: refused before anything starts, with the same words and status.
        let clientRefusal = try run([], viaClient: true, removing: ["XDG_RUNTIME_DIR"])
        let daemonRefusal = try run([], viaClient: false, removing: ["XDG_RUNTIME_DIR"])
        #expect(clientRefusal.status == 2 && daemonRefusal.status == 2)
        #expect(clientRefusal.standardError.contains("XDG_RUNTIME_DIR is not set") && daemonRefusal.standardError.contains("XDG_RUNTIME_DIR is not set"))
        // An option neither knows: a usage error, 2 (the CLI's code) from both.
        #expect(try run(["--frobnicate"], viaClient: true).status == 2)
        #expect(try run(["--frobnicate"], viaClient: false).status == 2)
        // A config that cannot be used: earshotd's own refusal (78), through the client too.
        let config = try EarshotBinary.temporaryFile("bad.toml", "[timing]\noff-grace-ms = \"soon\"\n")
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-two-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: runtime) }
        let viaClient = try EarshotBinary.run(
            ["daemon", "--config", config, "--state", runtime.appendingPathComponent("state/state.json").path],
            environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(viaClient.status == 78, "\(viaClient.standardError)")
        #expect(viaClient.standardError.contains("bad.toml:2"), "\(viaClient.standardError)")
    }
}
