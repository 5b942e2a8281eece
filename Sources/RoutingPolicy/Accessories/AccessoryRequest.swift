import AudioGraph

/// A change to one field of an update: leave it, set it, or (sources only) clear it.
public enum FieldChange<Value: Sendable & Hashable>: Sendable, Hashable {
    case keep
    case set(Value)
    case clear

    var isKeep: Bool { if case .keep = self { true } else { false } }
}

/// What an `update` asks for; at least one field is not `.keep`.
public struct AccessoryUpdate: Sendable, Hashable {
    public var placement: FieldChange<Placement> = .keep
    public var primarySource: FieldChange<BluetoothAddress> = .keep
    public var secondarySource: FieldChange<BluetoothAddress> = .keep

    public init(
        placement: FieldChange<Placement> = .keep, primarySource: FieldChange<BluetoothAddress> = .keep,
        secondarySource: FieldChange<BluetoothAddress> = .keep
    ) {
        self.placement = placement
        self.primarySource = primarySource
        self.secondarySource = secondarySource
    }

    public var isEmpty: Bool { placement.isKeep && primarySource.isKeep && secondarySource.isKeep }
    public var touchesSources: Bool { !primarySource.isKeep || !secondarySource.isKeep }
}

/// One operation of the accessory API, as the control API and `earshot eval` receive it.
public enum AccessoryRequest: Sendable, Hashable {
    case register(AccessoryIdentity, reporter: String, AccessoryConfiguration)
    /// `reporter` names who asks: the engine refuses an update or unregister of an accessory
    /// another reporter owns. The transports always name one (the control socket the
    /// connection's registered reporter or the `reporter` field; D-Bus an argument); nil is
    /// for callers inside the process and `earshot eval` scripts that leave it out.
    case update(AccessoryIdentity, AccessoryUpdate, reporter: String? = nil)
    case unregister(AccessoryIdentity, reporter: String? = nil)

    public var identity: AccessoryIdentity {
        switch self {
        case .register(let identity, _, _), .update(let identity, _, _), .unregister(let identity, _): identity
        }
    }

    /// The reporter the request names, if any.
    public var reporter: String? {
        switch self {
        case .register(_, let reporter, _): reporter
        case .update(_, _, let reporter), .unregister(_, let reporter): reporter
        }
    }

    /// The same request, naming `reporter` when it named none.
    public func naming(_ reporter: String?) -> AccessoryRequest {
        switch self {
        case .register: self
        case .update(let identity, let update, let named): .update(identity, update, reporter: named ?? reporter)
        case .unregister(let identity, let named): .unregister(identity, reporter: named ?? reporter)
        }
    }

    public var verb: String {
        switch self {
        case .register: "register"
        case .update: "update"
        case .unregister: "unregister"
        }
    }
}

/// Reads requests from their JSON form. Every mistake is an `invalid-request` whose message
/// names the field and what to send instead.
public enum AccessoryRequestDecoder {
    public static let verbs = ["register", "update", "unregister", "current"]

    public static func register(_ body: JSONValue) -> Result<AccessoryRequest, AccessoryError> {
        Result { () throws(AccessoryError) in
            let fields = try object(body, verb: "register")
            try rejectUnknown(fields, allowed: ["accessory", "reporter", "capabilities", "placement", "primary-source", "secondary-source"], verb: "register")
            let identity = try accessory(fields)
            let reporter = try reporterName(fields["reporter"])
            guard case .array(let items)? = fields["capabilities"] else {
                throw invalid("register needs \"capabilities\": a list of \"audio-switching\" and/or \"placement\" (it may be empty)")
            }
            var capabilities: AccessoryCapabilities = []
            for item in items {
                guard case .string(let name) = item, let capability = AccessoryCapability(rawValue: name) else {
                    throw invalid("unknown capability \(item.canonicalText): use \"audio-switching\" or \"placement\"")
                }
                capabilities.insert(.of(capability))
            }
            var configuration = AccessoryConfiguration(capabilities: capabilities)
            if let value = fields["placement"], value != .null { configuration.placement = try placement(value) }
            if let value = fields["primary-source"], value != .null { configuration.primarySource = try address(value, field: "primary-source") }
            if let value = fields["secondary-source"], value != .null { configuration.secondarySource = try address(value, field: "secondary-source") }
            return .register(identity, reporter: reporter, configuration)
        }
    }

    public static func update(_ body: JSONValue) -> Result<AccessoryRequest, AccessoryError> {
        Result { () throws(AccessoryError) in
            let fields = try object(body, verb: "update")
            try rejectUnknown(fields, allowed: ["accessory", "reporter", "placement", "primary-source", "secondary-source"], verb: "update")
            let identity = try accessory(fields)
            let reporter = try optionalReporter(fields["reporter"], verb: "update")
            var update = AccessoryUpdate()
            if let value = fields["placement"] {
                guard value != .null else {
                    throw invalid("placement cannot be cleared: send \"off-head\" when the accessory is not worn")
                }
                update.placement = .set(try placement(value))
            }
            if let value = fields["primary-source"] {
                update.primarySource = value == .null ? .clear : .set(try address(value, field: "primary-source"))
            }
            if let value = fields["secondary-source"] {
                update.secondarySource = value == .null ? .clear : .set(try address(value, field: "secondary-source"))
            }
            guard !update.isEmpty else {
                throw invalid("empty update: send at least one of \"placement\", \"primary-source\", \"secondary-source\"")
            }
            return .update(identity, update, reporter: reporter)
        }
    }

    public static func unregister(_ body: JSONValue) -> Result<AccessoryRequest, AccessoryError> {
        Result { () throws(AccessoryError) in
            let fields = try object(body, verb: "unregister")
            try rejectUnknown(fields, allowed: ["accessory", "reporter"], verb: "unregister")
            let identity = try accessory(fields)
            return .unregister(identity, reporter: try optionalReporter(fields["reporter"], verb: "unregister"))
        }
    }

    /// The accessory named by a `current` request.
    public static func identityOnly(_ body: JSONValue, verb: String) -> Result<AccessoryIdentity, AccessoryError> {
        Result { () throws(AccessoryError) in
            let fields = try object(body, verb: verb)
            try rejectUnknown(fields, allowed: ["accessory"], verb: verb)
            return try accessory(fields)
        }
    }

    private static func invalid(_ message: String) -> AccessoryError { AccessoryError(.invalidRequest, message) }

    private static func object(_ body: JSONValue, verb: String) throws(AccessoryError) -> [String: JSONValue] {
        guard case .object(let fields) = body else { throw invalid("\(verb) takes a JSON object such as {\"accessory\":\"AA:BB:CC:DD:EE:FF\"}") }
        return fields
    }

    private static func rejectUnknown(_ fields: [String: JSONValue], allowed: [String], verb: String) throws(AccessoryError) {
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw invalid("unknown field \"\(unknown)\" in \(verb): the fields are \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }

    private static func accessory(_ fields: [String: JSONValue]) throws(AccessoryError) -> AccessoryIdentity {
        guard case .string(let text)? = fields["accessory"] else {
            throw invalid("missing \"accessory\": give its Bluetooth address (AA:BB:CC:DD:EE:FF) or its node.name")
        }
        guard let identity = AccessoryIdentity(parsing: text) else {
            if text.utf8.count > AccessoryIdentity.maximumNameBytes {
                throw invalid("accessory of \(text.utf8.count) bytes: a node.name is at most \(AccessoryIdentity.maximumNameBytes) bytes")
            }
            if !text.contains(":" as Character), text.allSatisfy(\.isWhitespace) {
                throw invalid("blank accessory \(JSONValue.string(text).canonicalText): give its Bluetooth address (AA:BB:CC:DD:EE:FF) or its node.name")
            }
            if !text.contains(":" as Character) {
                throw invalid("malformed accessory \(JSONValue.string(text).canonicalText): a node.name has no whitespace at either end and no line break")
            }
            throw invalid("malformed accessory \"\(text)\": a Bluetooth address is six hex pairs like AA:BB:CC:DD:EE:FF; a node.name has no colon")
        }
        return identity
    }

    private static func reporterName(_ value: JSONValue?) throws(AccessoryError) -> String {
        guard case .string(let name)? = value, ReporterName.isValid(name) else {
            throw invalid("register needs \"reporter\": the reporter's reverse-DNS name (at most \(ReporterName.maximumBytes) bytes), such as \"org.example.airpods-reporter\"")
        }
        return name
    }

    private static func optionalReporter(_ value: JSONValue?, verb: String) throws(AccessoryError) -> String? {
        guard let value, value != .null else { return nil }
        guard case .string(let name) = value, ReporterName.isValid(name) else {
            throw invalid("malformed reporter \(value.canonicalText) in \(verb): give the reporter's reverse-DNS name, such as \"org.example.airpods-reporter\"")
        }
        return name
    }

    private static func placement(_ value: JSONValue) throws(AccessoryError) -> Placement {
        guard case .string(let text) = value, let placement = Placement(rawValue: text) else {
            throw invalid("unknown placement \(value.canonicalText): use one of \(Placement.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return placement
    }

    private static func address(_ value: JSONValue, field: String) throws(AccessoryError) -> BluetoothAddress {
        guard case .string(let text) = value, let address = BluetoothAddress.anyForm(text) else {
            throw invalid("malformed \(field) \(value.canonicalText): give a Bluetooth address like 11:22:33:44:55:66, or null to clear it")
        }
        return address
    }
}

/// Reporters name themselves in reverse-DNS form, like External Accessory protocol names.
public enum ReporterName {
    /// The names of Earshot's built-in headset drivers (`org.earshot.driver.aap`, …): reserved
    /// on the control socket and D-Bus, and a registration under one gives way to any other
    /// reporter's (docs/drivers.md: your own reporter wins).
    public static let builtInDriverPrefix = "org.earshot.driver."

    /// Whether `name` is under `builtInDriverPrefix`, in any letter case: reverse-DNS names are
    /// domain names, so `ORG.Earshot.Driver.aap` is reserved as much as `org.earshot.driver.aap`.
    public static func isBuiltInDriver(_ name: String) -> Bool {
        let prefix = builtInDriverPrefix.utf8
        guard name.utf8.count >= prefix.count else { return false }
        // ASCII case folding, byte by byte (a valid name is ASCII; any other byte never matches).
        return zip(name.utf8, prefix).allSatisfy { byte, expected in
            byte == expected || ((0x41...0x5A).contains(byte) && byte | 0x20 == expected)
        }
    }

    /// The refusal a transport gives a client that names itself as a built-in driver.
    public static func reservedError(_ name: String) -> AccessoryError {
        AccessoryError(.invalidRequest, "reporter \(name) is reserved: names under \(builtInDriverPrefix) are Earshot's built-in drivers'; choose your own reverse-DNS name")
    }

    /// The longest reporter name, in bytes (a DNS name's limit): the same on every transport and
    /// in the state file.
    public static let maximumBytes = 255

    public static func isValid(_ name: String) -> Bool {
        guard name.utf8.count <= maximumBytes else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }
}
