/// The methods of `org.earshot.Earshot1` and the argument signature each takes, so a call
/// with the wrong arguments is refused before it reaches the daemon.
enum EarshotBusMethod: String, CaseIterable, Sendable {
    case register = "Register"
    case update = "Update"
    case current = "Current"
    case unregister = "Unregister"
    case list = "List"
    case status = "Status"

    var signature: String {
        switch self {
        case .register: "ssasa{sv}"
        case .update: "ssa{sv}"
        case .unregister: "ss"
        case .current: "s"
        case .list, .status: ""
        }
    }

    /// The arguments as the InvalidArgs error names them.
    var arguments: String {
        switch self {
        case .register: "(s accessory, s reporter, as capabilities, a{sv} fields)"
        case .update: "(s accessory, s reporter, a{sv} changes)"
        case .unregister: "(s accessory, s reporter)"
        case .current: "(s accessory)"
        case .list, .status: "no arguments"
        }
    }
}
