/// The four fields an accessory reports: what it can do, where it is, and which hosts it plays for.
public struct AccessoryConfiguration: Sendable, Hashable {
    public var capabilities: AccessoryCapabilities
    public var placement: Placement?
    public var primarySource: BluetoothAddress?
    public var secondarySource: BluetoothAddress?

    public init(
        capabilities: AccessoryCapabilities, placement: Placement? = nil,
        primarySource: BluetoothAddress? = nil, secondarySource: BluetoothAddress? = nil
    ) {
        self.capabilities = capabilities
        self.placement = placement
        self.primarySource = primarySource
        self.secondarySource = secondarySource
    }

    public var hasSources: Bool { primarySource != nil || secondarySource != nil }
}

/// One live registration: who reported it and what it says.
public struct AccessoryRegistration: Sendable, Hashable {
    public var identity: AccessoryIdentity
    /// Reverse-DNS name of the reporter (`org.example.airpods-reporter`), or `config` for a
    /// static `[[accessory]]`.
    public var reporter: String
    public var configuration: AccessoryConfiguration
    public var registeredAt: Milliseconds

    public init(identity: AccessoryIdentity, reporter: String, configuration: AccessoryConfiguration, registeredAt: Milliseconds) {
        self.identity = identity
        self.reporter = reporter
        self.configuration = configuration
        self.registeredAt = registeredAt
    }
}
