/// Reads a device's `info.params` as pw-dump prints them: `EnumRoute` and `Route` lists of route
/// objects (`index`, `direction`, `name`, `description`, `priority`, `available`, `info` — a
/// struct printed as `[count, key, value, …]` —, `devices`, `profiles`, and on an active route
/// `device` and `profile`) and `Profile` (the current profile's `index`). A route that cannot be
/// read is skipped with a warning; a device without these params has no route information.
enum RouteDecoder {
    static func routes(_ params: JSONValue?, reader: FieldReader, warnings: inout DecodingWarnings) -> DeviceRoutes? {
        guard case .object(let fields)? = params else { return nil }
        let all = list(fields["EnumRoute"], "EnumRoute", reader: reader, warnings: &warnings)
        let active = list(fields["Route"], "Route", reader: reader, warnings: &warnings)
        var profile: Int?
        if case .array(let items)? = fields["Profile"], let first = items.first {
            profile = first["index"].flatMap(\.intValue)
        }
        guard all != nil || active != nil else { return nil }
        return DeviceRoutes(all: all ?? [], active: active ?? [], profile: profile)
    }

    private static func list(_ value: JSONValue?, _ key: String, reader: FieldReader, warnings: inout DecodingWarnings) -> [DeviceRoute]? {
        guard let value, value != .null else { return nil }
        guard case .array(let items) = value else {
            warnings.add(reader.error("field \"\(key)\" must be an array; field skipped"))
            return nil
        }
        var routes: [DeviceRoute] = []
        for (n, item) in items.enumerated() {
            guard routes.count < DeviceRoutes.limit else {
                warnings.add(reader.error("\(key) lists \(items.count) routes; the first \(DeviceRoutes.limit) are read"))
                break
            }
            var entry = reader
            entry.path += ".\(key)[\(n)]"
            do throws(GraphDecodingError) {
                routes.append(try route(item, reader: entry))
            } catch {
                warnings.add(GraphDecodingError(source: error.source, location: error.location, message: error.message + "; route skipped"))
            }
        }
        return routes
    }

    static func route(_ item: JSONValue, reader: FieldReader) throws(GraphDecodingError) -> DeviceRoute {
        guard case .object = item else { throw reader.error("expected a route object") }
        guard let index = item["index"]?.intValue else { throw reader.error("missing field \"index\"") }
        let name = try reader.string(item, "name")
        let direction: PortDirection
        switch item["direction"] {
        case .string(let text)? where text.lowercased() == "output": direction = .output
        case .string(let text)? where text.lowercased() == "input": direction = .input
        default: throw reader.error("field \"direction\" must be \"Input\" or \"Output\"")
        }
        let available: RouteAvailability
        switch item["available"] {
        case nil, .null?: available = .unknown
        case .string(let text)?:
            guard let value = RouteAvailability(rawValue: text.lowercased()) else {
                throw reader.error("field \"available\" has unknown value \"\(text)\"")
            }
            available = value
        default: throw reader.error("field \"available\" must be a string")
        }
        let description: String? = if case .string(let text)? = item["description"] { text } else { nil }
        return DeviceRoute(
            index: index, direction: direction, name: name, description: description,
            priority: item["priority"]?.intValue ?? 0, available: available,
            portType: info(item["info"])["port.type"], devices: integers(item["devices"]), profiles: integers(item["profiles"]),
            device: item["device"]?.intValue, profile: item["profile"]?.intValue)
    }

    /// The route's info struct as pw-dump prints it: `[count, key, value, …]` (or an object).
    static func info(_ value: JSONValue?) -> [String: String] {
        switch value {
        case .object(let fields)?:
            return fields.compactMapValues(\.propertyText)
        case .array(var items)?:
            if case .integer? = items.first { items.removeFirst() }
            var result: [String: String] = [:]
            var at = 0
            while at + 1 < items.count {
                if case .string(let key) = items[at], let text = items[at + 1].propertyText { result[key] = text }
                at += 2
            }
            return result
        default:
            return [:]
        }
    }

    private static func integers(_ value: JSONValue?) -> [Int] {
        guard case .array(let items)? = value else { return [] }
        return items.prefix(DeviceRoutes.limit).compactMap(\.intValue)
    }
}

extension JSONValue {
    /// An integer that fits `Int32` (route and profile indexes, priorities).
    var intValue: Int? {
        if case .integer(let value) = self, let small = Int32(exactly: value) { return Int(small) }
        return nil
    }
}
