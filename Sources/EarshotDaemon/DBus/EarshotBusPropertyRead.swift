import SystemBridge

/// A call to `org.freedesktop.DBus.Properties` on the object, checked on the bus thread: what
/// can be answered without the daemon (Set, a property or interface we do not have, the wrong
/// arguments) is answered there; a Get or GetAll of ours is returned, to be queued for the
/// daemon's status.
enum EarshotBusPropertyRead: Sendable {
    case one(EarshotBusProperty)
    case all

    static let interface = "org.freedesktop.DBus.Properties"
    /// The other interfaces of the object: they exist, and have no properties.
    private static let propertyless: Set<String> = [interface, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"]
    private static let methods: [(member: String, signature: String, arguments: String)] = [
        ("Get", "ss", "(s interface_name, s property_name)"),
        ("GetAll", "s", "(s interface_name)"),
        ("Set", "ssv", "(s interface_name, s property_name, v value)"),
    ]

    /// The read to queue, or nil when `call` has been answered.
    static func route(_ call: DBusMethodCall) -> EarshotBusPropertyRead? {
        guard let method = methods.first(where: { $0.member == call.member }) else {
            call.reply.fail(name: EarshotBusErrorName.unknownMethod, message: "\(interface) has no method \(call.member): its methods are Get, GetAll, Set")
            return nil
        }
        guard call.signature == method.signature, let owner = call.arguments.first?.string else {
            let got = call.signature.isEmpty ? "no arguments" : "(\(call.signature))"
            call.reply.fail(name: EarshotBusErrorName.invalidArgs, message: "\(method.member) takes \(method.arguments), not \(got)")
            return nil
        }
        // The spec lets a caller leave the interface empty; our properties are all on one.
        guard owner == EarshotBusService.interface || owner.isEmpty else {
            if !propertyless.contains(owner) {
                call.reply.fail(name: EarshotBusErrorName.unknownInterface, message: "\(EarshotBusService.objectPath) has no interface \(owner): its properties are on \(EarshotBusService.interface)")
            } else if method.member == "GetAll" {
                call.reply([.properties([:])])
            } else {
                call.reply.fail(name: EarshotBusErrorName.unknownProperty, message: "\(owner) has no properties: they are on \(EarshotBusService.interface)")
            }
            return nil
        }
        if method.member == "GetAll" { return .all }
        let name = call.arguments[1].string ?? ""
        guard let property = EarshotBusProperty(rawValue: name) else {
            let names = EarshotBusProperty.allCases.map(\.rawValue).joined(separator: ", ")
            call.reply.fail(name: EarshotBusErrorName.unknownProperty, message: "\(EarshotBusService.interface) has no property \(name): its properties are \(names)")
            return nil
        }
        guard method.member == "Get" else {
            call.reply.fail(name: EarshotBusErrorName.propertyReadOnly, message: readOnly(property))
            return nil
        }
        return .one(property)
    }

    /// Says what to do instead: the daemon's state is not for setting.
    private static func readOnly(_ property: EarshotBusProperty) -> String {
        switch property {
        case .defaultSink:
            "DefaultSink is read-only: choose the output in your sound settings (or wpctl set-default) and Earshot follows it"
        case .defaultSource:
            "DefaultSource is read-only: choose the microphone in your sound settings (or wpctl set-default) and Earshot follows it"
        case .callSource:
            "CallSource is read-only: it is the worn headset's microphone while [input] bluetooth-microphone = \"calls\" keeps it for calls (docs/policy.md §8)"
        case .hostAddresses:
            "HostAddresses is read-only: set host-addresses in the config, or let BlueZ report the adapters"
        case .mode:
            "Mode is read-only: it follows PipeWire (cooperative while a session manager runs, standalone without one)"
        case .connected:
            "Connected is read-only: it says whether the daemon is connected to PipeWire"
        }
    }
}
