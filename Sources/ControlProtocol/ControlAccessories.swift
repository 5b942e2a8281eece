import RoutingPolicy
import WireFields

// Accessory objects: register, update and current replies, list entries, accessory events'
// configuration, and (as `a{sv}`) the D-Bus service's replies.
extension ControlWire {
    /// The four fields an accessory reports. An accessory event's `configuration`, and part of
    /// every accessory object.
    public struct Configuration: WireRecord, Hashable {
        public var capabilities: [String]
        public var placement: String?
        public var primarySource: String?
        public var secondarySource: String?

        public init(capabilities: [String], placement: String? = nil, primarySource: String? = nil, secondarySource: String? = nil) {
            self.capabilities = capabilities
            self.placement = placement
            self.primarySource = primarySource
            self.secondarySource = secondarySource
        }

        public init(_ configuration: AccessoryConfiguration) {
            capabilities = configuration.capabilities.names
            placement = configuration.placement?.rawValue
            primarySource = configuration.primarySource?.description
            secondarySource = configuration.secondarySource?.description
        }

        public static let wireBlank = Configuration(capabilities: [])
        public static let wireFields: [WireField<Self>] = [
            .field("capabilities", \.capabilities, "any of `audio-switching`, `placement`"),
            .nullable("placement", \.placement, "`in-ear`, `on-head`, `over-the-ear` or `off-head`"),
            .nullable("primary-source", \.primarySource, "the Bluetooth address of the host it plays for"),
            .nullable("secondary-source", \.secondarySource, "a second host's address"),
        ]
    }

    /// An accessory object (register, update, current): `accessory` and the configuration's
    /// fields beside it, the fields of a register request less the reporter, so a client can
    /// send it back as it is.
    public struct Accessory: WireRecord, Hashable {
        public var accessory: String
        public var configuration: Configuration

        public init(accessory: String, configuration: Configuration) {
            self.accessory = accessory
            self.configuration = configuration
        }

        public init(_ identity: AccessoryIdentity, _ configuration: AccessoryConfiguration) {
            self.init(accessory: identity.description, configuration: Configuration(configuration))
        }

        public static let wireBlank = Accessory(accessory: "", configuration: .wireBlank)
        public static let wireFields: [WireField<Self>] = [
            .field("accessory", \.accessory, "a Bluetooth address or a `node.name`"),
            .inline(\.configuration),
        ]
    }

    /// One entry of list: an accessory object plus `reporter`, `stale` (restored from disk and
    /// not yet confirmed) and `sinks` (the `node.name`s it matches now). The daemon lists
    /// registrations as these.
    public struct ListedAccessory: WireRecord, Hashable {
        public var accessory: Accessory
        public var reporter: String
        public var stale: Bool
        public var sinks: [String]
        /// The built-in driver reading the device, when one does.
        public var driver: DriverEntry?

        public init(accessory: Accessory, reporter: String, stale: Bool, sinks: [String], driver: DriverEntry? = nil) {
            self.accessory = accessory
            self.reporter = reporter
            self.stale = stale
            self.sinks = sinks
            self.driver = driver
        }

        public init(_ registration: AccessoryRegistration, stale: Bool, sinks: [String], driver: DriverEntry? = nil) {
            self.init(
                accessory: Accessory(registration.identity, registration.configuration), reporter: registration.reporter, stale: stale, sinks: sinks,
                driver: driver)
        }

        /// `listed` in the daemon's order: by identity, addresses first, then node names.
        public static func sorted(_ listed: [ListedAccessory]) -> [ListedAccessory] {
            listed.map { ($0.identity, $0) }.sorted { lhs, rhs in
                switch (lhs.0, rhs.0) {
                case (let left?, let right?): left < right
                case (nil, nil): lhs.1.accessory.accessory < rhs.1.accessory.accessory
                case (nil, _?): false
                case (_?, nil): true
                }
            }.map(\.1)
        }

        /// The accessory as the daemon orders and pages them (addresses first, then node names).
        public var identity: AccessoryIdentity? { AccessoryIdentity(parsing: accessory.accessory) }

        public static let wireBlank = ListedAccessory(accessory: .wireBlank, reporter: "", stale: false, sinks: [])
        public static let wireFields: [WireField<Self>] = [
            .inline(\.accessory),
            .field("reporter", \.reporter, "the reporter that registered it"),
            .field("stale", \.stale, "restored from disk and not yet confirmed by its reporter"),
            .field("sinks", \.sinks, "the `node.name`s it matches now"),
            .omitted("driver", \.driver, "the built-in driver reading the device, when one does"),
        ]
    }
}
