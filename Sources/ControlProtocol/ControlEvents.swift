import AudioGraph
import RoutingPolicy
import WireFields

// The events `subscribe` streams, D-Bus signals and `earshot watch` prints: the daemon
// publishes these values themselves. Each field is declared once in its type's `wireFields`.
extension ControlWire {
    /// An event line: `event` (its name) and the event's fields beside it.
    public enum Event: Codable, Sendable, Hashable {
        case routeChange(RouteChangeEvent)
        case accessory(AccessoryEvent)
        case playback(PlaybackEvent)
        case hostAddresses(HostAddressesEvent)
        /// Since 0.4 (§8 calls).
        case streamMoved(StreamMovedEvent)
        case callSource(CallSourceEvent)
        /// An event this client does not know (from a newer daemon): its name and whole object.
        case other(name: String, JSONValue)

        /// The `event` field: `route-change`, `accessory`, `playback`, `host-addresses`,
        /// `stream-moved`, `call-source`.
        public var name: String {
            switch self {
            case .routeChange: RouteChangeEvent.name
            case .accessory: AccessoryEvent.name
            case .playback: PlaybackEvent.name
            case .hostAddresses: HostAddressesEvent.name
            case .streamMoved: StreamMovedEvent.name
            case .callSource: CallSourceEvent.name
            case .other(let name, _): name
            }
        }

        public init(from decoder: any Decoder) throws {
            let name = try decoder.container(keyedBy: LineKey.self).decode(String.self, forKey: .event)
            switch name {
            case RouteChangeEvent.name: self = .routeChange(try RouteChangeEvent(from: decoder))
            case AccessoryEvent.name: self = .accessory(try AccessoryEvent(from: decoder))
            case PlaybackEvent.name: self = .playback(try PlaybackEvent(from: decoder))
            case HostAddressesEvent.name: self = .hostAddresses(try HostAddressesEvent(from: decoder))
            case StreamMovedEvent.name: self = .streamMoved(try StreamMovedEvent(from: decoder))
            case CallSourceEvent.name: self = .callSource(try CallSourceEvent(from: decoder))
            default: self = .other(name: name, try JSONValue(from: decoder))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            if case .other(_, let value) = self { return try value.encode(to: encoder) }
            var container = encoder.container(keyedBy: LineKey.self)
            try container.encode(name, forKey: .event)
            switch self {
            case .routeChange(let event): try event.encode(to: encoder)
            case .accessory(let event): try event.encode(to: encoder)
            case .playback(let event): try event.encode(to: encoder)
            case .hostAddresses(let event): try event.encode(to: encoder)
            case .streamMoved(let event): try event.encode(to: encoder)
            case .callSource(let event): try event.encode(to: encoder)
            case .other: break
            }
        }
    }

    /// `route-change`: the default output changed — another sink, or a jack on the default — or,
    /// with `direction` `input` (0.4), the default source (§8).
    public struct RouteChangeEvent: WireRecord, Hashable {
        public static let name = "route-change"
        public var at: Int64
        public var reason: OpenEnum<RouteChangeReason>
        public var previous: String?
        public var current: String?
        public var accessory: String?
        public var summary: String
        public var previousPort: String?
        public var port: String?
        public var portEvent: PortEvent?
        public var direction: OpenEnum<AudioDirection>

        public init(
            at: Int64, reason: RouteChangeReason, previous: String?, current: String?, accessory: String?, summary: String,
            previousPort: String? = nil, port: String? = nil, portEvent: PortEvent? = nil, direction: AudioDirection = .output
        ) {
            self.at = at
            self.reason = OpenEnum(reason)
            self.previous = previous
            self.current = current
            self.accessory = accessory
            self.summary = summary
            self.previousPort = previousPort
            self.port = port
            self.portEvent = portEvent
            self.direction = OpenEnum(direction)
        }

        public static let wireBlank = RouteChangeEvent(at: 0, reason: .initial, previous: nil, current: nil, accessory: nil, summary: "")
        public static let wireFields: [WireField<Self>] = [
            .field("reason", \.reason, "why: `initial`, `new-device-available`, `old-device-unavailable`, `placement-changed`, `source-changed`, `user-override`, `config-changed`, `no-suitable-route`"),
            .nullable("previous", \.previous, "the default's `node.name` before"),
            .nullable("current", \.current, "the default's `node.name` after"),
            .nullable("accessory", \.accessory, "the accessory whose change caused it (its address or `node.name`)"),
            .field("summary", \.summary, "the decision's one-line summary (`2/5 sinks eligible: …`)"),
            .nullable("previous-port", \.previousPort, "since 0.3: the default's port (its active route's description) before, when its device publishes routes"),
            .nullable("port", \.port, "since 0.3: the port after"),
            .nullable("port-event", \.portEvent, "since 0.3: the jack or port event that made the change (`kind`, `sink`, `port`)"),
            .defaulted("direction", \.direction, OpenEnum(.output), "since 0.4: `output` (the default sink) or `input` (the default source); absent from an older daemon: `output`"),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }

    /// `accessory`: a registration changed.
    public struct AccessoryEvent: WireRecord, Hashable {
        public enum Change: String, Sendable, Hashable, Codable { case registered, updated, unregistered, invalidated }
        public static let name = "accessory"
        public var at: Int64
        public var change: OpenEnum<Change>
        public var accessory: String
        public var reporter: String?
        public var configuration: Configuration?

        public init(at: Int64, change: Change, accessory: String, reporter: String?, configuration: Configuration?) {
            self.at = at
            self.change = OpenEnum(change)
            self.accessory = accessory
            self.reporter = reporter
            self.configuration = configuration
        }

        public static let wireBlank = AccessoryEvent(at: 0, change: .updated, accessory: "", reporter: nil, configuration: nil)
        public static let wireFields: [WireField<Self>] = [
            .field("change", \.change, "`registered`, `updated`, `unregistered` or `invalidated` (dropped by a config reload)"),
            .field("accessory", \.accessory, "its address or `node.name`"),
            .nullable("reporter", \.reporter, "the reporter that registered it"),
            .nullable("configuration", \.configuration, "the four fields afterwards; null once the registration ended"),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }

    /// `playback`: Earshot paused or resumed MPRIS players, or held silent (muted) or gave back
    /// playback streams no pause stopped (docs/policy.md §7).
    public struct PlaybackEvent: WireRecord, Hashable {
        public enum Action: String, Sendable, Hashable, Codable { case paused, resumed, held, released }
        /// Why: the worn accessory came off (after its grace), its sink disappeared, it plays
        /// for another host, or it went back on; a jack on the default sink's port; the daemon
        /// stopped, or gave back at start what a daemon before it held.
        public typealias Reason = PlaybackReason

        public static let name = "playback"
        public var at: Int64
        public var action: OpenEnum<Action>
        public var reason: OpenEnum<Reason>
        public var players: [String]
        public var sink: String?
        public var accessory: String?
        /// How each player in `players` was found to play there: `pid`, `ancestor`, `flatpak`.
        public var matches: [String: String]
        /// The streams held or released.
        public var streams: [PlaybackStream]

        public init(
            at: Int64, action: Action, reason: Reason, players: [String], sink: String?, accessory: String?, matches: [String: String] = [:],
            streams: [PlaybackStream] = []
        ) {
            self.at = at
            self.action = OpenEnum(action)
            self.reason = OpenEnum(reason)
            self.players = players
            self.sink = sink
            self.accessory = accessory
            self.matches = matches
            self.streams = streams
        }

        public static let wireBlank = PlaybackEvent(at: 0, action: .paused, reason: .sinkRemoved, players: [], sink: nil, accessory: nil)
        public static let wireFields: [WireField<Self>] = [
            .field("action", \.action, "`paused` or `resumed` (MPRIS players); `held` (streams muted) or `released` (unmuted)"),
            .field("reason", \.reason, Reason.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")),
            .field("players", \.players, "the MPRIS bus names acted on, sorted (empty for `held` and `released`)"),
            .nullable("sink", \.sink, "the sink (`node.name`) they were playing on"),
            .nullable("accessory", \.accessory, "the accessory whose change caused it (its address or `node.name`)"),
            .defaulted("matches", \.matches, [:], "for `paused`: how each player was found to play there — `pid` (the stream's client is its process), `ancestor` (a child of it: Chromium, Electron), `flatpak` (the same Flatpak app and instance)"),
            .defaulted("streams", \.streams, [], "for `held` and `released`: the playback streams muted or unmuted"),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }

    /// A playback stream Earshot held silent or gave back.
    public struct PlaybackStream: WireRecord, Hashable {
        public var stream: UInt64
        public var serial: UInt64?
        public var application: String?
        public var name: String?

        public init(stream: UInt64, serial: UInt64?, application: String?, name: String?) {
            self.stream = stream
            self.serial = serial
            self.application = application
            self.name = name
        }

        public static let wireBlank = PlaybackStream(stream: 0, serial: nil, application: nil, name: nil)
        public static let wireFields: [WireField<Self>] = [
            .field("stream", \.stream, "the stream's node id"),
            .nullable("serial", \.serial, "its `object.serial` (ids are reused; serials are not)"),
            .nullable("application", \.application, "its `application.name`"),
            .nullable("name", \.name, "its `media.name` (else `node.name`)"),
        ]
    }

    /// `host-addresses`: this host's Bluetooth addresses in use changed.
    public struct HostAddressesEvent: WireRecord, Hashable {
        public static let name = "host-addresses"
        public var at: Int64
        public var addresses: [HostAddressEntry]
        public var added: [String]
        public var removed: [String]

        public init(at: Int64, addresses: [HostAddressEntry], added: [String], removed: [String]) {
            self.at = at
            self.addresses = addresses
            self.added = added
            self.removed = removed
        }

        /// The change from `before` to `after`, or nil when the addresses and their origins are
        /// the same.
        public init?(at: Int64, from before: [HostAddress], to after: [HostAddress]) {
            guard before != after else { return nil }
            let old = Set(before.map(\.address)), new = Set(after.map(\.address))
            self.init(
                at: at, addresses: after.map(HostAddressEntry.init),
                added: after.map(\.address).filter { !old.contains($0) }.map(\.description),
                removed: before.map(\.address).filter { !new.contains($0) }.map(\.description))
        }

        public static let wireBlank = HostAddressesEvent(at: 0, addresses: [], added: [], removed: [])
        public static let wireFields: [WireField<Self>] = [
            .field("addresses", \.addresses, "every address in use now, as `status` lists them (`address`, `from`)"),
            .field("added", \.added, "addresses in use now that were not before"),
            .field("removed", \.removed, "addresses no longer in use (both empty when only an origin changed)"),
            .field("at", \.at, "wall-clock milliseconds since the Unix epoch"),
        ]
    }
}
