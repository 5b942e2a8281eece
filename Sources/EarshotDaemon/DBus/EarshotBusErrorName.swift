import RoutingPolicy

/// The D-Bus error names of the service: the accessory model's four codes under
/// `org.earshot.Earshot1.Error`, and the standard names for calls that do not fit the interface.
enum EarshotBusErrorName {
    static func name(for code: AccessoryError.Code) -> String {
        switch code {
        case .accessoryNotCapable: "org.earshot.Earshot1.Error.AccessoryNotCapable"
        case .invalidRequest: "org.earshot.Earshot1.Error.InvalidRequest"
        case .invalidated: "org.earshot.Earshot1.Error.Invalidated"
        case .unknown: "org.earshot.Earshot1.Error.Unknown"
        }
    }

    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
}
