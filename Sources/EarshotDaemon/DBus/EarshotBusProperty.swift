import WireFields
import ControlProtocol
import SystemBridge

/// The read-only properties of `org.earshot.Earshot1` (served through
/// `org.freedesktop.DBus.Properties`): a few fields of the daemon's status that desktop
/// components want to bind to without calling `Status` and picking the `a{sv}` apart.
enum EarshotBusProperty: String, CaseIterable, Sendable {
    case defaultSink = "DefaultSink"
    /// The default source Earshot chose (§8); empty when none, or when the input is not
    /// followed.
    case defaultSource = "DefaultSource"
    /// The worn headset's microphone calls record from (§8 `bluetooth-microphone = "calls"`);
    /// empty when calls record from the default source.
    case callSource = "CallSource"
    case mode = "Mode"
    case connected = "Connected"
    case hostAddresses = "HostAddresses"

    /// The value now, read from the same status `Status` answers with.
    func value(in status: ControlWire.Status) -> DBusValue {
        switch self {
        case .defaultSink: .string(status.decisionRecord?.default ?? "")
        case .defaultSource: .string(status.decisionRecord?.defaultSource ?? "")
        case .callSource: .string(status.calls?.source ?? "")
        case .mode: .string(status.mode.rawValue)
        case .connected: .boolean(status.connected)
        case .hostAddresses: .strings(status.hostAddresses.map(\.description))
        }
    }

    /// GetAll's answer.
    static func all(in status: ControlWire.Status) -> DBusValue {
        .properties(Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0.value(in: status)) }))
    }

    /// The arguments of the PropertiesChanged an event implies (interface, changed, invalidated),
    /// or nil. Only DefaultSink, DefaultSource, CallSource and HostAddresses have events; a mode or connection change has
    /// none, so Mode and Connected are declared with EmitsChangedSignal "false" in the XML
    /// rather than signalled some of the time.
    static func changedSignal(for event: ControlWire.Event) -> [DBusValue]? {
        let changed: [String: DBusValue]
        switch event {
        case .routeChange(let change):
            changed = [(change.direction == .input ? defaultSource : defaultSink).rawValue: .string(change.current ?? "")]
        case .hostAddresses(let change): changed = [hostAddresses.rawValue: .strings(change.addresses.map(\.description))]
        case .callSource(let change): changed = [callSource.rawValue: .string(change.current ?? "")]
        case .accessory, .playback, .streamMoved, .other: return nil
        }
        return [.string(EarshotBusService.interface), .properties(changed), .strings([])]
    }
}
