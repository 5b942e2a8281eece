import SystemBridge

/// Earshot's battery provider objects as D-Bus values: the ObjectManager at
/// `/org/earshot/battery` and one `org.bluez.BatteryProvider1` child per headset, the
/// answers to the calls BlueZ (and anyone) makes on them, and the signals of each change.
/// Pure: no bus.
enum BatteryProviderObjects {
    typealias Child = BatteryProviderPlan.Child

    enum Answer: Equatable {
        case values([DBusValue])
        case error(name: String, message: String)
    }

    static func properties(of child: Child) -> [String: DBusValue] {
        [
            BatteryInterface.percentage: .byte(child.percentage), BatteryInterface.device: .objectPath(child.devicePath),
            BatteryInterface.source: .string(BlueZBatteryView.ownSource),
        ]
    }

    /// `a{sa{sv}}`: the child's one interface.
    static func interfaces(of child: Child) -> DBusValue {
        .array(element: "{sa{sv}}", [.dictEntry(.string(BatteryInterface.provider), .properties(properties(of: child)))])
    }

    /// `a{oa{sa{sv}}}`, ordered by path.
    static func managedObjects(_ children: [String: Child]) -> DBusValue {
        .array(
            element: "{oa{sa{sv}}}",
            children.sorted { $0.key < $1.key }.map { .dictEntry(.objectPath($0.key), interfaces(of: $0.value)) })
    }

    static func added(_ path: String, _ child: Child) -> [DBusValue] { [.objectPath(path), interfaces(of: child)] }

    static func removed(_ path: String) -> [DBusValue] { [.objectPath(path), .strings([BatteryInterface.provider])] }

    static func percentageChanged(_ percentage: UInt8) -> [DBusValue] {
        [.string(BatteryInterface.provider), .properties([BatteryInterface.percentage: .byte(percentage)]), .strings([])]
    }

    /// The answer to a method call on `/org/earshot/battery` or below, given the children now.
    static func answer(path: String, interface: String?, member: String, arguments: [DBusValue], children: [String: Child]) -> Answer {
        let empty = DBusValue.properties([:])
        let unknownMethod = Answer.error(
            name: "org.freedesktop.DBus.Error.UnknownMethod", message: "\(interface ?? "").\(member) is not served at \(path)")
        if path == BatteryProviderPlan.rootPath {
            switch (interface, member) {
            case (BlueZInterface.objectManager, "GetManagedObjects"): return .values([managedObjects(children)])
            case (BlueZInterface.properties, "GetAll"): return .values([empty])
            default: return unknownMethod
            }
        }
        guard let child = children[path] else {
            return .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no battery at \(path) (its headset is gone)")
        }
        let asked = arguments.first?.string
        switch (interface, member) {
        case (BlueZInterface.properties, "GetAll"):
            return .values([asked == BatteryInterface.provider ? .properties(properties(of: child)) : empty])
        case (BlueZInterface.properties, "Get"):
            guard asked == BatteryInterface.provider, arguments.count == 2, let name = arguments[1].string,
                let value = properties(of: child)[name]
            else { return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "no such property") }
            return .values([.variant(value)])
        case (BlueZInterface.properties, "Set"):
            return .error(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "the battery's properties are read-only")
        default:
            return unknownMethod
        }
    }
}
