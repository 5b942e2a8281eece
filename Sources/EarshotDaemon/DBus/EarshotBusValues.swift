import WireFields
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
    static func accessories(_ listed: [ControlWire.ListedAccessory]) -> DBusValue {
        .array(element: "a{sv}", listed.map { properties($0) })
    }

    /// Status: the socket's status with the decision's headline fields spelled out, the text
    /// `earshot status --explain` prints, and the whole decision as JSON for tools that want
    /// every term.
    static func status(_ status: ControlWire.Status) -> DBusValue {
        typealias Status = ControlWire.Status
        let record = status.decisionRecord
        return .properties([
            Status.wireKey(\.mode): .string(status.mode.rawValue),
            Status.wireKey(\.remote): .string(status.remote),
            Status.wireKey(\.connected): .boolean(status.connected),
            Status.wireKey(\.sessionManager): .string(status.sessionManager ?? ""),
            Status.wireKey(\.sessionManagerVersion): .string(status.sessionManagerVersion ?? ""),
            Status.wireKey(\.subscribers): .uint32(UInt32(clamping: status.subscribers)),
            Status.wireKey(\.hostAddresses): .strings(status.hostAddresses.map(\.description)),
            Status.wireKey(\.state): .string(status.state ?? "ok"),
            "default": .string(record?.default ?? ""),
            "default-source": .string(record?.defaultSource ?? ""),
            "previous": .string(record?.previous ?? ""),
            "reason": .string(record?.reason ?? ""),
            "trigger": .string(record?.trigger ?? ""),
            "summary": .string(record?.summary ?? ""),
            "explanation": .string(StatusText.render(status, explain: true)),
            "decision": .string(record?.jsonLine ?? ""),
        ])
    }

    /// A field's JSON value as the D-Bus argument of `signature`: none is `""` (an empty
    /// `a{sv}` for an object, 0 for an unsigned number).
    static func value(_ json: JSONValue, signature: String) -> DBusValue {
        switch (signature, json) {
        case ("s", .null): .string("")
        case ("a{sv}", .null): .properties([:])
        case ("as", .null): .strings([])
        // Unsigned: a node id or a serial; none is 0.
        case ("t", .integer(let number)): .uint64(UInt64(clamping: number))
        case ("t", .null): .uint64(0)
        default: value(json)
        }
    }

    /// A wire object as `a{sv}`, by its field names.
    static func properties(_ object: some Encodable) -> DBusValue {
        guard case .object(let fields)? = try? ControlWire.jsonValue(of: object) else { return .properties([:]) }
        return .properties(fields.mapValues(value))
    }

    /// A JSON value as a D-Bus one: null as "", a list of strings as `as`, an object as `a{sv}`.
    static func value(_ json: JSONValue) -> DBusValue {
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
