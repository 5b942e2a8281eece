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
        case .update: "sa{sv}"
        case .current, .unregister: "s"
        case .list, .status: ""
        }
    }

    /// The arguments as the InvalidArgs error names them.
    var arguments: String {
        switch self {
        case .register: "(s accessory, s reporter, as capabilities, a{sv} fields)"
        case .update: "(s accessory, a{sv} changes)"
        case .current, .unregister: "(s accessory)"
        case .list, .status: "no arguments"
        }
    }
}
