import AudioGraph

/// An accessory request as the JSON body the control protocol and `earshot eval` scripts read
/// (`AccessoryRequestDecoder` reads it back to the same request): what `earshot record` writes.
public enum AccessoryRequestEncoder {
    /// The verb (`register`, `update`, `unregister`) and its body.
    public static func encode(_ request: AccessoryRequest) -> (verb: String, body: JSONValue) {
        var fields: [String: JSONValue] = ["accessory": .string(request.identity.description)]
        if let reporter = request.reporter { fields["reporter"] = .string(reporter) }
        switch request {
        case .register(_, _, let configuration):
            fields["capabilities"] = .array(configuration.capabilities.names.map(JSONValue.string))
            if let placement = configuration.placement { fields["placement"] = .string(placement.rawValue) }
            if let source = configuration.primarySource { fields["primary-source"] = .string(source.description) }
            if let source = configuration.secondarySource { fields["secondary-source"] = .string(source.description) }
        case .update(_, let update, _):
            if case .set(let placement) = update.placement { fields["placement"] = .string(placement.rawValue) }
            fields["primary-source"] = change(update.primarySource)
            fields["secondary-source"] = change(update.secondarySource)
        case .unregister:
            break
        }
        return (request.verb, .object(fields))
    }

    /// A source change: absent when kept, null when cleared.
    private static func change(_ field: FieldChange<BluetoothAddress>) -> JSONValue? {
        switch field {
        case .keep: nil
        case .clear: .null
        case .set(let address): .string(address.description)
        }
    }
}
