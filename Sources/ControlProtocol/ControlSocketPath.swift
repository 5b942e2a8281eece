import FoundationEssentials
import SystemBridge

/// Where the control socket lives: `$XDG_RUNTIME_DIR/earshot/control`, the per-user runtime
/// directory systemd-logind makes (mode 0700, removed at logout), so the socket never outlives
/// the session nor is reachable by other users.
public enum ControlSocketPath {
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(CurrentProcess.userID)"
        return runtime + "/earshot/control"
    }
}
