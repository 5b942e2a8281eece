import AudioGraph
import RoutingPolicy
import WireFields

/// How decisions are applied (docs/architecture.md, "Applying a decision").
public enum ApplyMode: String, Sendable, Hashable, Codable {
    /// A session manager (WirePlumber) runs: write the configured default, let it move streams.
    case cooperative
    /// No session manager: keep the `default` metadata and link streams ourselves.
    case standalone
    /// Not connected to PipeWire.
    case disconnected
}

extension ControlWire {
    /// `status`'s `playback`: what Earshot stopped and may give back.
    public struct PlaybackStatus: WireRecord, Hashable {
        /// Each player Earshot paused and may resume, with how it was matched.
        public var paused: [PausedPlayer]
        public var held: [HeldEntry]

        public init(paused: [PausedPlayer], held: [HeldEntry]) {
            self.paused = paused
            self.held = held
        }

        public static let wireBlank = PlaybackStatus(paused: [], held: [])
        public static let wireFields: [WireField<Self>] = [
            .field("paused", \.paused, "the players Earshot paused and would resume when their headset returns within the window"),
            .field("held", \.held, "the streams Earshot muted because no pause stopped them"),
        ]
    }

    public struct PausedPlayer: WireRecord, Hashable {
        public var player: String
        public var match: String
        public var sink: String
        public var accessory: String

        public init(player: String, match: String, sink: String, accessory: String) {
            self.player = player
            self.match = match
            self.sink = sink
            self.accessory = accessory
        }

        public static let wireBlank = PausedPlayer(player: "", match: "", sink: "", accessory: "")
        public static let wireFields: [WireField<Self>] = [
            .field("player", \.player, "its MPRIS bus name"),
            .field("match", \.match, "`pid`, `ancestor` or `flatpak`"),
            .field("sink", \.sink, "where it played"),
            .field("accessory", \.accessory, "the accessory whose return resumes it"),
        ]
    }

    public struct HeldEntry: WireRecord, Hashable {
        public var stream: PlaybackStream
        public var sink: String
        public var accessory: String

        public init(stream: PlaybackStream, sink: String, accessory: String) {
            self.stream = stream
            self.sink = sink
            self.accessory = accessory
        }

        public static let wireBlank = HeldEntry(stream: .wireBlank, sink: "", accessory: "")
        public static let wireFields: [WireField<Self>] = [
            .inline(\.stream),
            .field("sink", \.sink, "where it played"),
            .field("accessory", \.accessory, "the accessory whose return gives it back"),
        ]
    }
}

// `status`: what the daemon publishes of itself (the socket's status, D-Bus's Status and
// properties, `earshot status`).
extension ControlWire {
    public struct Status: WireRecord {
        public var mode: OpenEnum<ApplyMode>
        public var remote: String
        public var connected: Bool
        public var sessionManager: String?
        public var sessionManagerVersion: String?
        public var decision: DecisionObject?
        public var subscribers: Int
        public var hostAddresses: [HostAddressEntry]
        public var state: String?
        public var drivers: [DriverEntry]
        public var diagnostics: Diagnostics?
        /// Calls (§8): where they record from, the streams pointed there; nil when none.
        public var calls: CallRoutingOutcome?
        /// What Earshot paused and holds silent now (§7); nil when nothing.
        public var playback: PlaybackStatus?

        public init(
            mode: ApplyMode, remote: String, connected: Bool, sessionManager: String?, sessionManagerVersion: String? = nil, decision: DecisionObject?,
            subscribers: Int = 0, hostAddresses: [HostAddressEntry] = [], state: String? = "ok", drivers: [DriverEntry] = [],
            diagnostics: Diagnostics? = Diagnostics(switchSpans: []), calls: CallRoutingOutcome? = nil, playback: PlaybackStatus? = nil
        ) {
            self.mode = OpenEnum(mode)
            self.remote = remote
            self.connected = connected
            self.sessionManager = sessionManager
            self.sessionManagerVersion = sessionManagerVersion
            self.decision = decision
            self.subscribers = subscribers
            self.hostAddresses = hostAddresses
            self.state = state
            self.drivers = drivers
            self.diagnostics = diagnostics
            self.calls = calls
            self.playback = playback
        }

        /// The state line for `stateProblem`: `ok`, or `not saved (REASON)`.
        public static func state(problem: String?) -> String { problem.map { "not saved (\($0))" } ?? "ok" }

        /// The decision as the daemon made it (nil from a client, which reads JSON).
        public var decisionRecord: DecisionRecord? {
            if case .record(let record)? = decision { record } else { nil }
        }

        public static let wireBlank = Status(mode: .disconnected, remote: "", connected: false, sessionManager: nil, decision: nil)
        public static let wireFields: [WireField<Self>] = [
            .field("mode", \.mode, "`cooperative` (a session manager moves the streams), `standalone` (Earshot links them) or `disconnected`"),
            .field("remote", \.remote, "the PipeWire remote"),
            .field("connected", \.connected, "whether the daemon is connected to PipeWire"),
            .nullable("session-manager", \.sessionManager, "the session manager's name (`WirePlumber`); null in standalone mode"),
            .nullable("session-manager-version", \.sessionManagerVersion, "its version as its client publishes it (WirePlumber 0.5 and later)"),
            .nullable("decision", \.decision, "the latest decision as `earshot eval --format json` prints it; null before the first"),
            .nullable("calls", \.calls, "since 0.4: calls (§8 `bluetooth-microphone = \"calls\"`) of the latest decision: `source` (the Bluetooth microphone they record from), `streams` (pointed there now), `moves` (that decision's); null when there are none, and from an older daemon"),
            .nullable("playback", \.playback, "since 0.4: what Earshot paused and holds silent now (§7): `paused` (each player it may resume, with how it was matched) and `held` (the streams it muted); null when nothing, and from an older daemon"),
            .field("subscribers", \.subscribers, "clients subscribed to events now"),
            .field("host-addresses", \.hostAddresses, "this host's Bluetooth addresses in use, each with `from`"),
            .nullable("state", \.state, "`ok`, or `not saved (REASON)` while registrations and history cannot be saved"),
            .defaulted("drivers", \.drivers, [], "the built-in drivers' devices; `[]` from a daemon older than them"),
            .nullable("diagnostics", \.diagnostics, "measurements for `scripts/bench`, not a stable interface; null from an older daemon"),
        ]
    }

    /// `status`'s `diagnostics`: what the bench reads of the daemon's own timing.
    public struct Diagnostics: WireRecord, Hashable {
        public var switchSpans: [SwitchSpanEntry]
        /// The control socket's own counts; filled in by the socket that answers (none on D-Bus).
        public var control: ControlSocketCounts?

        public init(switchSpans: [SwitchSpanEntry], control: ControlSocketCounts? = nil) {
            self.switchSpans = switchSpans
            self.control = control
        }

        public static let wireBlank = Diagnostics(switchSpans: [])
        public static let wireFields: [WireField<Self>] = [
            .field("switch-spans", \.switchSpans, "Earshot's own span of the last switches control requests caused (at most 16, oldest first)"),
            .omitted("control", \.control, "since 0.4: what the control socket holds now (the connection asking included)"),
        ]
    }

    /// What the control socket holds at the moment a `status` is answered on it: connections,
    /// the objects behind them and the bytes queued for clients. A client that left must leave
    /// none of it behind once its last request is done (issue 38).
    public struct ControlSocketCounts: WireRecord, Hashable {
        public var accepted: Int
        public var open: Int
        public var settling: Int
        public var connectionObjects: Int
        public var sessionObjects: Int
        public var unsentBytes: Int

        public init(accepted: Int, open: Int, settling: Int, connectionObjects: Int, sessionObjects: Int, unsentBytes: Int) {
            self.accepted = accepted
            self.open = open
            self.settling = settling
            self.connectionObjects = connectionObjects
            self.sessionObjects = sessionObjects
            self.unsentBytes = unsentBytes
        }

        public static let wireBlank = ControlSocketCounts(accepted: 0, open: 0, settling: 0, connectionObjects: 0, sessionObjects: 0, unsentBytes: 0)
        public static let wireFields: [WireField<Self>] = [
            .field("accepted", \.accepted, "connections accepted since the socket opened (refused ones included; those still waiting in the listen backlog are not)"),
            .field("open", \.open, "connections open"),
            .field("settling", \.settling, "connections closed whose requests already read are still being answered or saved"),
            .field("connection-objects", \.connectionObjects, "connection objects not yet freed (each with its buffers and dispatch sources)"),
            .field("session-objects", \.sessionObjects, "request sessions not yet freed (each with its queued requests and tasks)"),
            .field("unsent-bytes", \.unsentBytes, "bytes of replies and events queued for clients and not yet taken by their sockets"),
        ]
    }

    /// One switch a control request caused, as CLOCK_MONOTONIC nanoseconds (the clock every
    /// process shares). The daemon's `SwitchSpanTracker` keeps these values themselves.
    public struct SwitchSpanEntry: WireRecord, Hashable {
        public var read: UInt64
        public var sent: UInt64
        public var echo: UInt64

        public init(read: UInt64, sent: UInt64, echo: UInt64) {
            self.read = read
            self.sent = sent
            self.echo = echo
        }

        public static let wireBlank = SwitchSpanEntry(read: 0, sent: 0, echo: 0)
        public static let wireFields: [WireField<Self>] = [
            .field("read-ns", \.read, "the request line read off the socket"),
            .field("sent-ns", \.sent, "the write of `default.configured.audio.sink` it caused handed to libpipewire"),
            .field("echo-ns", \.echo, "that write's echo (PipeWire reporting the value back) taken by the daemon"),
        ]
    }

    /// One device a built-in driver drives, in `status`.
    public struct DriverEntry: WireRecord, Hashable {
        public var address: String
        public var family: String
        public var name: String?
        public var connection: String
        public var problem: String?
        public var battery: [String: Int]?
        public var lastPacket: String?
        public var packets: Int
        public var skipped: Int
        /// `reported` or `not-reported` once the driver found out (Sony sets differ); nil before.
        public var wear: String?
        /// How it is reported, or why not, in plain words.
        public var wearDetail: String?
        public var desktopBattery: String?

        public init(
            address: String, family: String, name: String?, connection: String, problem: String?, battery: [String: Int]?, lastPacket: String?,
            packets: Int, skipped: Int
        ) {
            self.address = address
            self.family = family
            self.name = name
            self.connection = connection
            self.problem = problem
            self.battery = battery
            self.lastPacket = lastPacket
            self.packets = packets
            self.skipped = skipped
        }

        public static let wireBlank = DriverEntry(address: "", family: "", name: nil, connection: "", problem: nil, battery: nil, lastPacket: nil, packets: 0, skipped: 0)
        public static let wireFields: [WireField<Self>] = [
            .field("address", \.address, "the device's Bluetooth address"),
            .field("family", \.family, "`aap`, `galaxy-buds` or `sony`"),
            .omitted("name", \.name, "the device's name"),
            .field("connection", \.connection, "`connecting`, `connected`, `held`, `unreachable`, `unavailable`, `yielded`, `failed`"),
            .omitted("problem", \.problem, "the last problem, when not connected"),
            .omitted("battery", \.battery, "percentages by part (`left`, `right`, `case`, `headset`)"),
            .omitted("last-packet", \.lastPacket, "when the last packet came (ISO 8601)"),
            .field("packets", \.packets, "packets read"),
            .field("skipped", \.skipped, "packets or frames skipped (unknown, malformed, bad CRC, oversized)"),
            .omitted("wear", \.wear, "whether the headset says it is worn: `reported`, or `not-reported` (its battery is still read; a reporter of your own can say it); left out until the driver knows"),
            .omitted("wear-detail", \.wearDetail, "how wear is read, or why it is not"),
            .omitted("desktop-battery", \.desktopBattery, "whether its battery reaches the desktop: `provided`, `no-provider-manager`, `provided-by-other`, `off`"),
        ]
    }

    /// The decision object of `status`. Its shape is `DecisionRecord`'s (RoutingPolicy, what
    /// `earshot eval --format json` prints): the daemon writes the record itself; a client,
    /// which cannot rebuild a record from JSON, reads it as JSON.
    public enum DecisionObject: Codable, Sendable, WireTyped {
        case record(DecisionRecord)
        case json(JSONValue)

        public static var wireType: WireType { .object }

        public init(from decoder: any Decoder) throws {
            self = .json(try JSONValue(from: decoder))
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .record(let record): try record.encode(to: encoder)
            case .json(let value): try value.encode(to: encoder)
            }
        }

        /// The object as a client reads it (a record is encoded into JSONValue directly): for
        /// the D-Bus service's `explanation`, rendered from what a client would read.
        public var json: JSONValue {
            switch self {
            case .json(let value): value
            case .record(let record): (try? ControlWire.jsonValue(of: record)) ?? .null
            }
        }
    }

    /// One of this host's Bluetooth addresses in use: `address` and `from` (where it came from:
    /// `config`, `bluez hci0`).
    public struct HostAddressEntry: WireRecord, Hashable, CustomStringConvertible {
        public var address: String
        public var from: [String]

        public init(address: String, from: [String]) {
            self.address = address
            self.from = from
        }

        public init(_ host: HostAddress) {
            self.init(address: host.address.description, from: host.origins.map(\.description))
        }

        /// As D-Bus and `earshot status` spell it: `11:22:33:44:55:66 (config, bluez hci0)`.
        public var description: String { "\(address) (\(from.joined(separator: ", ")))" }

        public static let wireBlank = HostAddressEntry(address: "", from: [])
        public static let wireFields: [WireField<Self>] = [
            .field("address", \.address, "the address"),
            .field("from", \.from, "where it came from: `config`, `bluez hciN`"),
        ]
    }
}
