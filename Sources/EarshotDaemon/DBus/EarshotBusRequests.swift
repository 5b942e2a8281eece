import WireFields
import ControlProtocol
import AudioGraph
import FoundationEssentials
import RoutingPolicy
import SystemBridge

/// Reads the arguments of Register, Update, Current and Unregister into requests. They are
/// turned into the JSON body of the matching control-protocol request and validated by
/// `AccessoryRequestDecoder`, so both transports refuse the same things with the same
/// field-named messages. D-Bus has no null: an empty string in `fields`/`changes` means none
/// (Register) or clear (Update; placement cannot be cleared, as on the socket).
enum EarshotBusRequests {
    /// The request fields' names, as the control protocol's types spell them.
    private typealias Key = ControlWire.RegisterRequest.CodingKeys

    static func register(_ arguments: [DBusValue]) -> Result<AccessoryRequest, AccessoryError> {
        guard arguments.count == 4, let accessory = arguments[0].string, let reporter = arguments[1].string,
            let capabilities = arguments[2].stringList, let fields = arguments[3].dictionary
        else { return .failure(malformed(.register)) }
        return body(fields, method: .register, positional: [
            Key.accessory.stringValue: .string(accessory), Key.reporter.stringValue: .string(reporter),
            ControlWire.Configuration.wireKey(\.capabilities): .array(capabilities.map(JSONValue.string)),
        ]).flatMap { AccessoryRequestDecoder.register($0).mapError(spokenForDBus) }.flatMap(refusingBuiltInDriverNames)
    }

    static func update(_ arguments: [DBusValue]) -> Result<AccessoryRequest, AccessoryError> {
        guard arguments.count == 3, let accessory = arguments[0].string, let reporter = arguments[1].string,
            let changes = arguments[2].dictionary
        else { return .failure(malformed(.update)) }
        return body(changes, method: .update, positional: [
            Key.accessory.stringValue: .string(accessory), Key.reporter.stringValue: .string(reporter),
        ]).flatMap { AccessoryRequestDecoder.update($0).mapError(spokenForDBus) }.flatMap(refusingBuiltInDriverNames)
    }

    /// Unregister names the accessory and the reporter that owns it.
    static func unregister(_ arguments: [DBusValue]) -> Result<AccessoryRequest, AccessoryError> {
        guard arguments.count == 2, let accessory = arguments[0].string, let reporter = arguments[1].string else {
            return .failure(malformed(.unregister))
        }
        return AccessoryRequestDecoder.unregister(.object([
            Key.accessory.stringValue: .string(accessory), Key.reporter.stringValue: .string(reporter),
        ])).flatMap(refusingBuiltInDriverNames)
    }

    /// The accessory of Current.
    static func identity(_ arguments: [DBusValue], method: EarshotBusMethod) -> Result<AccessoryIdentity, AccessoryError> {
        guard arguments.count == 1, let accessory = arguments[0].string else { return .failure(malformed(method)) }
        return AccessoryRequestDecoder.identityOnly(.object([Key.accessory.stringValue: .string(accessory)]), verb: method.rawValue)
    }

    /// The request body: the dictionary's entries (an empty string as null) plus the
    /// positional arguments, which the dictionary may not repeat.
    private static func body(
        _ dictionary: [String: DBusValue], method: EarshotBusMethod, positional: [String: JSONValue]
    ) -> Result<JSONValue, AccessoryError> {
        var fields: [String: JSONValue] = [:]
        for (key, value) in dictionary {
            if positional[key] != nil {
                let names = positional.keys.sorted().joined(separator: ", ")
                return .failure(AccessoryError(.invalidRequest, "\"\(key)\" is an argument of \(method.rawValue), not a dictionary entry (\(names) are arguments; the entries are placement, primary-source, secondary-source)"))
            }
            fields[key] = value == .string("") ? .null : json(value)
        }
        return .success(.object(fields.merging(positional) { $1 }))
    }

    /// A D-Bus value as JSON, so the decoder's messages quote what was sent.
    private static func json(_ value: DBusValue) -> JSONValue {
        let value = value.unwrapped
        if let text = value.string { return .string(text) }
        if let flag = value.bool { return .bool(flag) }
        if let number = value.integer { return .integer(number) }
        if case .double(let number) = value { return .number(number) }
        if let entries = value.dictionary { return .object(entries.mapValues(json)) }
        if let elements = value.elements { return .array(elements.map(json)) }
        if case .structure(let fields) = value { return .array(fields.map(json)) }
        return .string("\(value)")
    }

    /// The decoder speaks JSON ("null to clear it"); on D-Bus the empty string clears.
    /// Names under org.earshot.driver. are the built-in drivers' only.
    private static func refusingBuiltInDriverNames(_ request: AccessoryRequest) -> Result<AccessoryRequest, AccessoryError> {
        guard let reporter = request.reporter, ReporterName.isBuiltInDriver(reporter) else { return .success(request) }
        return .failure(ReporterName.reservedError(reporter))
    }

    private static func spokenForDBus(_ error: AccessoryError) -> AccessoryError {
        AccessoryError(error.code, error.message.replacing("or null to clear it", with: "or \"\" to clear it"))
    }

    /// Only reached if the signature check before dispatch was skipped.
    private static func malformed(_ method: EarshotBusMethod) -> AccessoryError {
        AccessoryError(.invalidRequest, "\(method.rawValue) takes \(method.arguments)")
    }
}
