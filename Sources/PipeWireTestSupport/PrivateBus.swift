import Foundation

/// A private `dbus-daemon` listening on a socket in `directory`, for tests: the session bus
/// of a sandbox, or a stand-in system bus (same permissive session policy, so a test's
/// stand-in service may own `org.bluez`). Stopped by PID with `stop()` or its owner.
public final class PrivateBus: Sendable {
    /// The address to put in `DBUS_SESSION_BUS_ADDRESS` / `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    public let process: ChildProcess

    /// Starts the bus and returns once it accepts connections (it prints its address then).
    /// Its configuration (`NAME.conf` beside the log) is the session bus's without service
    /// directories: nothing is ever started on demand. A bus that activated the host's services
    /// (Firefox asks for `org.a11y.Bus`, GTK for `ca.desrt.dconf`) would start daemons that are
    /// children of no fixture and that no test stops by PID.
    public init(name: String, socket: String, environment: [String: String], logFile: URL) throws {
        address = "unix:path=\(socket)"
        let configFile = logFile.deletingLastPathComponent().appendingPathComponent("\(name).conf")
        try Self.configuration.write(to: configFile, atomically: true, encoding: .utf8)
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { close(readEnd) }
        let started: ChildProcess
        do {
            started = try ChildProcess(
                name: name, arguments: ["dbus-daemon", "--config-file=\(configFile.path)", "--nofork", "--address=\(address)", "--print-address=1"],
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

    /// Debian's /usr/share/dbus-1/session.conf (policy and limits), less
    /// `<standard_session_servicedirs/>` and the includes of local configuration.
    static let configuration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <keep_umask/>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_incoming_unix_fds">250000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_outgoing_unix_fds">250000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="service_start_timeout">120000</limit>
          <limit name="auth_timeout">240000</limit>
          <limit name="pending_fd_timeout">150000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_incomplete_connections">10000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_pending_service_starts">10000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>

        """
}
