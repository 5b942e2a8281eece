import ControlProtocol
import FoundationEssentials
import SystemBridge
import SystemPackage

/// One daemon per PipeWire: the lock file for a remote, beside the control socket in
/// `$XDG_RUNTIME_DIR/earshot/`, named after the PipeWire socket the remote resolves to. It
/// guards independently of D-Bus (a desktop without a session bus) and of `--socket` (two
/// daemons with different control sockets would still route the same audio).
public enum InstanceLockPath {
    public static func `for`(remote: String?, environment: [String: String]) -> String {
        let name = remote ?? environment["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"
        let socket: String
        if name.hasPrefix("/") {
            socket = name
        } else {
            let directory = [environment["PIPEWIRE_RUNTIME_DIR"], environment["XDG_RUNTIME_DIR"]]
                .compactMap { $0.flatMap { $0.isEmpty ? nil : $0 } }.first ?? "/run/user/\(CurrentProcess.userID)"
            socket = directory + "/" + name
        }
        let directory = FilePath(ControlSocketPath.default(environment: environment)).removingLastComponent().string
        let key = socket.split(separator: "/").joined(separator: "_")
        return "\(directory)/pipewire-\(key).lock"
    }
}
