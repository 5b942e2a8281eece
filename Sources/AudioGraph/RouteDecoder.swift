/// Reads a device's `EnumRoute`, `Route` and `Profile` params straight from the pw-dump bytes
/// (the decoder captures them unbuilt): a dump of thousands of cards holds tens of thousands of
/// routes, and building each as a tree of dictionaries cost more than the rest of the file.
/// Routes as pw-dump prints them: `index`, `direction`, `name`, `description`, `priority`,
/// `available`, `info` (a struct printed `[count, key, value, …]`, or an object), `devices`,
/// `profiles`, and on an active route `device` and `profile`; `Profile` is the current
/// profile's object (`index`). A route that cannot be read is skipped with a warning; a device
/// without these params has no route information.
enum RouteDecoder {
    static let enumRoute = "EnumRoute", route = "Route", profile = "Profile"
    /// Routes of one list that each get a warning of their own; the rest are counted.
    static let problemsListed = 3

    /// One element of a route list as read: the route, or why it cannot be one.
    enum Entry: Sendable {
        case route(DeviceRoute)
        case problem(String)
        /// An element past `DeviceRoutes.limit`, stepped over.
        case dropped
    }

    /// A route list (`EnumRoute`, `Route`), read in the scanner's pass: anything but an array
    /// reads as one problem.
    @Sendable static func readList(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> JSONScanner.Captured {
        guard scanner.peek() == UInt8(ascii: "[") else {
            let isNull = scanner.peek() == UInt8(ascii: "n")
            try scanner.skipValue()
            return isNull ? .routes([]) : .notRoutes
        }
        var entries: [Entry] = []
        var kept = 0
        try scanner.forEachElement { (element: inout JSONScanner) throws(JSONScanner.Failure) in
            guard kept < DeviceRoutes.limit else {
                try element.skipValue()
                entries.append(.dropped)
                return
            }
            entries.append(try route(&element))
            kept += 1
        }
        return .routes(entries)
    }

    /// `Profile`: the first object's `index`.
    @Sendable static func readProfile(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> JSONScanner.Captured {
        guard scanner.peek() == UInt8(ascii: "[") else {
            try scanner.skipValue()
            return .profile(nil)
        }
        var found: Int?
        try scanner.forEachElement { (element: inout JSONScanner) throws(JSONScanner.Failure) in
            guard found == nil, element.peek() == UInt8(ascii: "{") else { return try element.skipValue() }
            try element.forEachField { (key: String, value: inout JSONScanner) throws(JSONScanner.Failure) in
                if key == "index", found == nil { found = try value.smallInteger() } else { try value.skipValue() }
            }
        }
        return .profile(found)
    }

    /// The device's routes from what its scan captured, each problem one warning with its
    /// path; nil when it has neither `EnumRoute` nor `Route`.
    static func routes(in captured: [String: JSONScanner.Captured], reader: FieldReader, warnings: inout DecodingWarnings) -> DeviceRoutes? {
        let all = list(enumRoute, captured, reader: reader, warnings: &warnings)
        let active = list(route, captured, reader: reader, warnings: &warnings)
        guard all != nil || active != nil else { return nil }
        var profile: Int?
        if case .profile(let index)? = captured[Self.profile] { profile = index }
        return DeviceRoutes(all: all ?? [], active: active ?? [], profile: profile)
    }

    private static func list(_ name: String, _ captured: [String: JSONScanner.Captured], reader: FieldReader, warnings: inout DecodingWarnings) -> [DeviceRoute]? {
        let entries: [Entry]
        switch captured[name] {
        case .routes(let read)?: entries = read
        case .notRoutes?:
            warnings.add(reader.error("field \"\(name)\" must be an array; field skipped"))
            return nil
        default: return nil
        }
        var routes: [DeviceRoute] = []
        routes.reserveCapacity(entries.count)
        var dropped = 0, skipped = 0
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .route(let route): routes.append(route)
            case .dropped: dropped += 1
            case .problem(let message):
                // The first few of a list each say where; the rest are counted in one line, so
                // one broken card does not hide every other warning.
                skipped += 1
                if skipped <= problemsListed { warnings.add(reader.error("\(message); route skipped", at: ".\(name)[\(index)]")) }
            }
        }
        if skipped > problemsListed {
            warnings.add(reader.error("\(skipped - problemsListed) more route(s) of \(name) skipped", at: ".\(name)"))
        }
        if dropped > 0 { warnings.add(reader.error("\(name) lists \(routes.count + skipped + dropped) routes; the first \(DeviceRoutes.limit) are read")) }
        return routes
    }

    /// One route object, its fields read as they come; unknown fields stepped over.
    static func route(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> Entry {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try scanner.skipValue()
            return .problem("expected a route object")
        }
        var index: Int?, name: String?, direction: PortDirection?, description: String?, priority = 0
        var available = RouteAvailability.unknown, portType: String?, devices = RouteIndexSet(), profiles = RouteIndexSet()
        var device: Int?, profile: Int?
        var problem: String?
        try scanner.forEachField { (key: String, value: inout JSONScanner) throws(JSONScanner.Failure) in
            switch key {
            case "index": index = try value.smallInteger()
            case "name": name = try value.optionalString()
            case "description": description = try value.optionalString()
            case "priority": priority = try value.smallInteger() ?? 0
            case "device": device = try value.smallInteger()
            case "profile": profile = try value.smallInteger()
            case "direction":
                switch try value.optionalString()?.lowercased() {
                case "output": direction = .output
                case "input": direction = .input
                default: problem = problem ?? "field \"direction\" must be \"Input\" or \"Output\""
                }
            case "available":
                if value.peek() == UInt8(ascii: "n") {
                    try value.skipValue()
                } else if let text = try value.optionalString(), let parsed = RouteAvailability(rawValue: text.lowercased()) {
                    available = parsed
                } else {
                    problem = problem ?? "field \"available\" must be \"yes\", \"no\" or \"unknown\""
                }
            case "info": portType = try value.portType()
            case "devices": devices = try value.indexSet(limit: DeviceRoutes.limit)
            case "profiles": profiles = try value.indexSet(limit: DeviceRoutes.limit)
            default: try value.skipValue()
            }
        }
        if let problem { return .problem(problem) }
        guard let index else { return .problem("missing field \"index\"") }
        guard let name else { return .problem("missing field \"name\"") }
        guard let direction else { return .problem("field \"direction\" must be \"Input\" or \"Output\"") }
        return .route(DeviceRoute(
            index: index, direction: direction, name: name, description: description, priority: priority, available: available,
            portType: portType, devices: devices, profiles: profiles, device: device, profile: profile))
    }
}

extension JSONScanner {
    /// Reads an object's fields in order, handing each key and the scanner at its value to
    /// `body`, which must read or skip exactly that value.
    mutating func forEachField(_ body: (String, inout JSONScanner) throws(Failure) -> Void) throws(Failure) {
        try consume(UInt8(ascii: "{"))
        if peek() == UInt8(ascii: "}") {
            consume()
            return
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else { throw Failure(offset: offset) }
            let key = try string()
            try consume(UInt8(ascii: ":"))
            try body(key, &self)
            switch peek() {
            case UInt8(ascii: ","): consume()
            case UInt8(ascii: "}"):
                consume()
                return
            default: throw Failure(offset: offset)
            }
        }
    }

    /// A string, or nil (the value stepped over) when the value is something else.
    mutating func optionalString() throws(Failure) -> String? {
        guard peek() == UInt8(ascii: "\"") else {
            try skipValue()
            return nil
        }
        return try string()
    }

    /// An integer that fits `Int32`, or nil (stepped over) for anything else.
    mutating func smallInteger() throws(Failure) -> Int? {
        guard let byte = peek(), byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
            try skipValue()
            return nil
        }
        guard case .integer(let value) = try number(), let small = Int32(exactly: value) else { return nil }
        return Int(small)
    }

    /// The small integers of an array as a set (at most `limit` read); anything else reads as
    /// none.
    mutating func indexSet(limit: Int) throws(Failure) -> RouteIndexSet {
        guard peek() == UInt8(ascii: "[") else {
            try skipValue()
            return []
        }
        var result = RouteIndexSet()
        var count = 0
        try forEachElement { (element: inout JSONScanner) throws(Failure) in
            let value = try element.smallInteger()
            if let value, count < limit {
                result.insert(value)
                count += 1
            }
        }
        return result
    }

    /// `port.type` of a route's info: `[count, key, value, …]` as pw-dump prints the struct,
    /// or an object.
    mutating func portType() throws(Failure) -> String? {
        switch peek() {
        case UInt8(ascii: "["):
            var found: String?
            var pendingKey: String?
            try forEachElement { (element: inout JSONScanner) throws(Failure) in
                guard element.peek() == UInt8(ascii: "\"") else {
                    try element.skipValue()  // the leading count (or a value of another kind)
                    pendingKey = nil
                    return
                }
                let text = try element.string()
                if let key = pendingKey {
                    if key == "port.type", found == nil { found = text }
                    pendingKey = nil
                } else {
                    pendingKey = text
                }
            }
            return found
        case UInt8(ascii: "{"):
            var found: String?
            try forEachField { (key: String, value: inout JSONScanner) throws(Failure) in
                if key == "port.type" { found = try value.optionalString() } else { try value.skipValue() }
            }
            return found
        default:
            try skipValue()
            return nil
        }
    }
}
