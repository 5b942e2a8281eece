import SystemPackage
import ArgumentParser
import DaemonArguments
import FoundationEssentials
import SystemBridge

/// `earshot daemon`: the main job. The client checks the options (the same declaration as the
/// daemon's), then hands over to the daemon executable, `earshotd`, in the same process (exec):
/// the PID, the terminal and the signals stay, so `earshot daemon` behaves as it always did while
/// the client itself links nothing of the daemon.
struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the routing engine: the output follows the headset you wear.",
        discussion: """
            Applies decisions through WirePlumber when it runs (cooperative), or links streams itself \
            when no session manager runs (standalone). Reloads the config on SIGHUP and when the file \
            changes; stops on SIGTERM or SIGINT. Runs earshotd (next to earshot, or in \
            ../libexec/ from it) with these options.
            """)

    @OptionGroup var arguments: DaemonArguments

    func run() throws {
        let client = CurrentProcess.executablePath
        guard let daemon = DaemonExecutable.find(besides: client) else {
            return try CommandOutcome(
                standardError: "earshot daemon: the daemon executable earshotd is not installed (looked for \(DaemonExecutable.candidates(besides: client).joined(separator: " and ")))\n",
                exitCode: 1).emit()
        }
        // The options exactly as given after `daemon` (they parsed above), for earshotd to parse.
        let given = CommandLine.arguments
        let after = given.firstIndex(of: "daemon").map { Array(given[($0 + 1)...]) } ?? []
        let error = CurrentProcess.execute(daemon, arguments: ["earshotd"] + after)
        try CommandOutcome(standardError: "earshot daemon: cannot run \(daemon): \(error)\n", exitCode: 1).emit()
    }
}

/// Where `earshot daemon` finds `earshotd`: beside the client (a build directory, scripts/install's
/// prefix/bin when both are there), then in the prefix's libexec (a package: /usr/bin/earshot and
/// /usr/libexec/earshotd).
enum DaemonExecutable {
    static func candidates(besides client: String?) -> [String] {
        guard let client else { return ["/usr/libexec/earshotd"] }
        let directory = FilePath(client).removingLastComponent().string
        let prefix = FilePath(directory).removingLastComponent().string
        return ["\(directory)/earshotd", "\(prefix)/libexec/earshotd"]
    }

    static func find(besides client: String?) -> String? {
        candidates(besides: client).first(where: FileSystem.isExecutable)
    }
}
