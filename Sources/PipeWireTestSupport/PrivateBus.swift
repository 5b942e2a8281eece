import Foundation

/// A private `dbus-daemon` listening on a socket in `directory`, for tests: the session bus
/// of a sandbox, or a stand-in system bus (same permissive session policy, so a test's
/// stand-in service may own `org.bluez`). Stopped by PID with `stop()` or its owner.
public final class PrivateBus: Sendable {
    /// The address to put in `DBUS_SESSION_BUS_ADDRESS` / `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    public let process: ChildProcess

    /// Starts the bus and returns once it accepts connections (it prints its address then).
    public init(name: String, socket: String, environment: [String: String], logFile: URL) throws {
        address = "unix:path=\(socket)"
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { close(readEnd) }
        let started: ChildProcess
        do {
            started = try ChildProcess(
                name: name, arguments: ["dbus-daemon", "--session", "--nofork", "--address=\(address)", "--print-address=1"],
                environment: environment, logFile: logFile, stdoutFD: writeEnd)
        } catch {
            close(writeEnd)
            throw error
        }
        close(writeEnd)
        process = started
        guard Readiness.readLine(from: readEnd, timeout: .seconds(10)) != nil else {
            started.stop()
            throw FixtureError("\(name) (dbus-daemon) did not start (exit status \(started.exitStatus.map(String.init) ?? "running"))")
        }
    }

    public func stop() { process.stop() }
}
