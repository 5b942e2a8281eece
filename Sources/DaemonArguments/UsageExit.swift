import ArgumentParser
import Dispatch
import SystemPackage

/// ArgumentParser's own `main()`, except that a usage error exits 2 instead of 64 (EX_USAGE):
/// Earshot's exit codes are 0 ok, 1 refused, 2 usage, 3 daemon not reachable, the same for
/// `earshot` and `earshotd` (so `earshot daemon`, which hands over to earshotd, exits alike).
public enum UsageExit {
    public static func main<Command: ParsableCommand>(_ type: Command.Type) async -> Never {
        do {
            var command = try type.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            type.exit()
        } catch {
            exit(type, failingWith: error)
        }
    }

    /// `main` without starting the concurrency runtime for a command that does not need it: the
    /// client's commands are synchronous but one (`graph`), and an `async` entry point spends
    /// its start-up on the executor's threads. An asynchronous command runs on a task the main
    /// thread waits for.
    public static func mainSynchronously<Command: ParsableCommand>(_ type: Command.Type) -> Never {
        do {
            var command = try type.parseAsRoot()
            if let asynchronous = command as? any AsyncParsableCommand {
                try runBlocking(asynchronous)
            } else {
                try command.run()
            }
            type.exit()
        } catch {
            exit(type, failingWith: error)
        }
    }

    /// Ends the process for `error` as ArgumentParser would, but a usage error with status 2.
    private static func exit<Command: ParsableCommand>(_ type: Command.Type, failingWith error: any Error) -> Never {
        if type.exitCode(for: error) == .validationFailure {
            _ = try? FileDescriptor.standardError.writeAll(Array((type.fullMessage(for: error) + "\n").utf8))
            type.exit(withError: ExitCode(2))
        }
        type.exit(withError: error)
    }

    /// Runs `command` on a detached task and blocks this thread until it ends.
    private static func runBlocking(_ command: any AsyncParsableCommand) throws {
        // The main thread hands the command over and only waits: nothing else touches it.
        let run = Handover(command)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run.run()
            done.signal()
        }
        done.wait()
        if let error = run.failure { throw error }
    }
}

/// A command handed from the waiting main thread to the task that runs it, and its failure
/// back: one side writes while the other waits on the semaphore.
private final class Handover: @unchecked Sendable {
    private var command: any AsyncParsableCommand
    private(set) var failure: (any Error)?

    init(_ command: any AsyncParsableCommand) { self.command = command }

    func run() async {
        do {
            try await command.run()
        } catch {
            failure = error
        }
    }
}
