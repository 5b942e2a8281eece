import ArgumentParser
import FoundationEssentials
import RoutingPolicy

/// `--socket PATH`, shared by every command that talks to the daemon.
struct ControlSocketOption: ParsableArguments {
    @Option(name: .customLong("socket"), help: ArgumentHelp(
        "The daemon's control socket.", discussion: "Default: $XDG_RUNTIME_DIR/earshot/control.", valueName: "path"))
    var path: String?
}

/// Checks of command-line values that need no daemon: a mistake here is a usage error (exit 2),
/// not a refusal.
enum ControlArguments {
    static func accessory(_ text: String) throws {
        guard AccessoryIdentity(parsing: text) != nil else {
            throw ValidationError("\"\(text)\" is neither a Bluetooth address (AA:BB:CC:DD:EE:FF) nor a node.name (which has no colon)")
        }
    }

    /// `audio-switching,placement`; `none` or an empty value for no capability.
    static func capabilities(_ text: String) throws -> [String] {
        let names = text.split(separator: ",").map { String($0.trimmingWhitespace) }.filter { !$0.isEmpty && $0 != "none" }
        for name in names where AccessoryCapability(rawValue: name) == nil {
            throw ValidationError("unknown capability \"\(name)\": use audio-switching and/or placement, comma-separated")
        }
        return names
    }

    static func placement(_ text: String?) throws {
        guard let text, Placement(rawValue: text) == nil else { return }
        throw ValidationError("unknown placement \"\(text)\": use one of \(Placement.allCases.map(\.rawValue).joined(separator: ", "))")
    }

    static func source(_ text: String?, option: String, allowNone: Bool) throws {
        guard let text else { return }
        if allowNone, text == "none" { return }
        guard BluetoothAddress(text) == nil else { return }
        throw ValidationError("\(option) \"\(text)\" is not a Bluetooth address like 11:22:33:44:55:66" + (allowNone ? " (or none to clear it)" : ""))
    }
}
