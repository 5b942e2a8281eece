import ControlProtocol
import AudioGraph
import RoutingPolicy
import SystemBridge

/// What the service sends: replies and signal arguments. Accessories are the control
/// protocol's own types (ControlWire.Accessory and friends) turned into `a{sv}` by their field
/// names, so both transports carry the same fields under the same names, spelled once; D-Bus
/// has no null, so none is an empty string.
enum EarshotBusValues {
    /// Register, Update, Current: accessory, capabilities, placement, primary-source, secondary-source.
    static func accessory(_ identity: AccessoryIdentity, _ configuration: AccessoryConfiguration) -> DBusValue {
        properties(ControlWire.Accessory(identity, configuration))
    }

    /// Register's reply: the accessory plus `warnings` (as), as the socket's register reply.
    static func registered(_ identity: AccessoryIdentity, _ configuration: AccessoryConfiguration, warnings: [String]) -> DBusValue {
        guard var fields = accessory(identity, configuration).dictionary else { return accessory(identity, configuration) }
        fields["warnings"] = .strings(warnings)
        return .properties(fields)
    }

    /// List: each accessory plus reporter, stale and sinks.
    static func accessories(_ statuses: [AccessoryStatus]) -> DBusValue {
        .array(element: "a{sv}", statuses.map { properties(ControlWire.ListedAccessory($0)) })
    }

    /// Status: the socket's status with the decision's headline fields spelled out, the text
    /// `earshot status --explain` prints, and the whole decision as JSON for tools that want
    /// every term.
    static func status(_ status: DaemonStatus) -> DBusValue {
        typealias Key = ControlWire.Status.CodingKeys
        let wire = ControlWire.Status(status)
        let record = status.decision.map { DecisionRecord($0) }
        return .properties([
            Key.mode.stringValue: .string(wire.mode),
            Key.remote.stringValue: .string(wire.remote),
            Key.connected.stringValue: .boolean(wire.connected),
            Key.sessionManager.stringValue: .string(wire.sessionManager ?? ""),
            Key.sessionManagerVersion.stringValue: .string(wire.sessionManagerVersion ?? ""),
            Key.subscribers.stringValue: .uint32(UInt32(clamping: wire.subscribers)),
            Key.hostAddresses.stringValue: .strings(status.hostAddresses.map(\.description)),
            Key.state.stringValue: .string(wire.state ?? "ok"),
            "default": .string(record?.default ?? ""),
            "default-source": .string(record?.defaultSource ?? ""),
            "previous": .string(record?.previous ?? ""),
            "reason": .string(record?.reason ?? ""),
            "trigger": .string(record?.trigger ?? ""),
            "summary": .string(record?.summary ?? ""),
            "explanation": .string(StatusText.render(wire, explain: true)),
            "decision": .string(record?.jsonLine ?? ""),
        ])
    }

    /// `RoutePortChanged`, sent right after a `RouteChanged` that has ports to name: the
    /// route's port before and after, and the jack event that made it (`unplugged`, `plugged`,
    /// or empty) with its sink and port.
    static func portSignal(_ event: DaemonEvent) -> (member: String, arguments: [DBusValue])? {
        guard case .routeChanged(let change) = event, change.direction == .output,
            change.port != nil || change.previousPort != nil || change.portEvent != nil
        else {
            return nil
        }
        return ("RoutePortChanged", [
            .string(change.reason.rawValue), .string(change.current ?? ""), .string(change.previousPort ?? ""), .string(change.port ?? ""),
            .string(change.portEvent?.kind.rawValue ?? ""), .string(change.portEvent?.sink ?? ""), .string(change.portEvent?.port ?? ""),
            .int64(change.at),
        ])
    }

    /// `InputRouteChanged` (§8): the default source changed. RouteChanged and
    /// RoutePortChanged stay the output's, with the arguments they always had.
    static func inputSignal(_ change: RouteChange) -> (member: String, arguments: [DBusValue]) {
        ("InputRouteChanged", [
            .string(change.reason.rawValue), .string(change.previous ?? ""), .string(change.current ?? ""),
            .string(change.accessory ?? ""), .string(change.summary), .string(change.previousPort ?? ""), .string(change.port ?? ""),
            .string(change.portEvent?.kind.rawValue ?? ""), .int64(change.at),
        ])
    }

    /// The signal for an event: its member name and arguments, in the order of the XML.
    static func signal(_ event: DaemonEvent) -> (member: String, arguments: [DBusValue]) {
        switch event {
        case .routeChanged(let change) where change.direction == .input:
            return inputSignal(change)
        case .routeChanged(let change):
            return ("RouteChanged", [
                .string(change.reason.rawValue), .string(change.previous ?? ""), .string(change.current ?? ""),
                .string(change.accessory ?? ""), .string(change.summary), .int64(change.at),
            ])
        case .accessoryChanged(let change):
            let configuration = change.configuration.map { properties(ControlWire.Configuration($0)) } ?? .properties([:])
            return ("AccessoryChanged", [
                .string(change.kind.rawValue), .string(change.accessory), .string(change.reporter ?? ""), configuration, .int64(change.at),
            ])
        case .playbackChanged(let change):
            return ("PlaybackChanged", [
                .string(change.action.rawValue), .string(change.reason.rawValue), .strings(change.players),
                .string(change.sink ?? ""), .string(change.accessory ?? ""), .int64(change.at),
            ])
        case .hostAddressesChanged(let change):
            // Each address with its origins as Status's host-addresses spells it.
            return ("HostAddressesChanged", [
                .strings(change.addresses.map(\.description)), .strings(change.added.map(\.description)),
                .strings(change.removed.map(\.description)), .int64(change.at),
            ])
        }
    }

    /// A wire object as `a{sv}`, by its field names.
    static func properties(_ object: some Encodable) -> DBusValue {
        guard case .object(let fields)? = try? ControlWire.jsonValue(of: object) else { return .properties([:]) }
        return .properties(fields.mapValues(value))
    }

    /// A JSON value as a D-Bus one: null as "", a list of strings as `as`, an object as `a{sv}`.
    private static func value(_ json: JSONValue) -> DBusValue {
        switch json {
        case .null: return .string("")
        case .bool(let flag): return .boolean(flag)
        case .integer(let number): return .int64(number)
        case .number(let number): return .double(number)
        case .string(let text): return .string(text)
        case .object(let fields): return .properties(fields.mapValues(value))
        case .array(let items):
            let texts = items.compactMap { item -> String? in if case .string(let text) = item { text } else { nil } }
            return texts.count == items.count ? .strings(texts) : .array(element: "v", items.map { .variant(value($0)) })
        }
    }
}
