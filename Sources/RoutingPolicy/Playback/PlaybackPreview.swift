import WireFields
import AudioGraph

/// What a departure would do to what plays on the departing sink (docs/policy.md §7), as
/// `earshot eval` shows it: each stream paused (a player's), held (muted), kept (a call's) or
/// left (not playing, already muted, or `hold-unpausable = "leave"`).
public struct PlaybackPreview: WireRecord, Hashable {
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        case pause, hold, keep, leave
    }

    public struct Stream: WireRecord, Hashable {
        public var stream: UInt64
        public var serial: UInt64?
        public var application: String?
        public var action: OpenEnum<Action>
        /// The player that would pause it, and how it was matched.
        public var player: String?
        public var match: String?
        public var why: String

        public init(stream: UInt64, serial: UInt64?, application: String?, action: Action, player: String?, match: String?, why: String) {
            self.stream = stream
            self.serial = serial
            self.application = application
            self.action = OpenEnum(action)
            self.player = player
            self.match = match
            self.why = why
        }

        public static let wireBlank = Stream(stream: 0, serial: nil, application: nil, action: .leave, player: nil, match: nil, why: "")
        public static let wireFields: [WireField<Stream>] = [
            .field("stream", \.stream, "the playback stream's node id"),
            .nullable("serial", \.serial, "its `object.serial`"),
            .nullable("application", \.application, "its `application.name`"),
            .field("action", \.action, "`pause` (a player of the script's `add-player` lines plays it), `hold` (muted: no player would pause it), `keep` (a call's: stays audible) or `leave` (not playing, already muted, or `hold-unpausable = \"leave\"`)"),
            .nullable("player", \.player, "for `pause`: the MPRIS bus name"),
            .nullable("match", \.match, "for `pause`: `pid`, `ancestor` or `flatpak`"),
            .field("why", \.why, "why, in words"),
        ]
    }

    public var reason: OpenEnum<PlaybackReason>
    public var sink: String
    public var accessory: String
    public var streams: [Stream]

    public init(reason: PlaybackReason, sink: String, accessory: String, streams: [Stream]) {
        self.reason = OpenEnum(reason)
        self.sink = sink
        self.accessory = accessory
        self.streams = streams
    }

    public static let wireBlank = PlaybackPreview(reason: .accessoryRemoved, sink: "", accessory: "", streams: [])
    public static let wireFields: [WireField<PlaybackPreview>] = [
        .field("reason", \.reason, "`accessory-removed`, `sink-removed`, `other-host` or `port-unplugged`"),
        .field("sink", \.sink, "the departing sink (`node.name`)"),
        .field("accessory", \.accessory, "the accessory that left (its address or `node.name`)"),
        .field("streams", \.streams, "each playback stream that played there, by id"),
    ]

    /// `pause #81 (ancestor) · hold #82 · keep #83`: each stream's action, in stream order.
    public var summary: String {
        guard !streams.isEmpty else { return "nothing played on \(sink)" }
        return streams.map { stream in "\(stream.action.rawValue) #\(stream.stream)" + (stream.match.map { " (\($0))" } ?? "") }.joined(separator: " · ")
    }

    /// A media player as a script declares it: its bus name, its process, the processes it
    /// started (Chromium's audio service), its Flatpak sandbox, and whether it plays.
    public struct Player: Sendable, Hashable {
        public var name: String
        public var pid: Int32
        public var descendants: [Int32]
        public var flatpak: FlatpakInstance?
        public var playing: Bool

        public init(name: String, pid: Int32, descendants: [Int32] = [], flatpak: FlatpakInstance? = nil, playing: Bool = true) {
            self.name = name
            self.pid = pid
            self.descendants = descendants
            self.flatpak = flatpak
            self.playing = playing
        }
    }

    /// The preview of `departure` over `graph`: the playback streams linked to its sink now.
    public static func of(_ departure: PlaybackDeparture, graph: Graph, players: [Player], config: PolicyConfig) -> PlaybackPreview {
        let sinkIDs = Set(graph.nodes.values.filter { $0.isAudioSink && $0.name == departure.sink }.map(\.id))
        let linked = Set(graph.links.values.filter { sinkIDs.contains($0.inputNode) }.map(\.outputNode))
        let streams = linked.sorted().compactMap { graph.nodes[$0] }.filter(\.isPlaybackStream)
        // The script's processes: each descendant a child of its player (the depth does not
        // matter to a match), each starting with it.
        var table = ProcessTable(processes: players.flatMap { player in player.descendants.map { ProcessRecord(pid: $0, parent: player.pid, startTime: 0) } })
        for player in players { table.processes[player.pid] = ProcessRecord(pid: player.pid, parent: 1, startTime: 0) }
        var matcher = PlayerMatcher(processes: table)
        var stopped: Set<ObjectID> = []
        var paused: [ObjectID: (Player, PlayerMatchKind)] = [:]
        for stream in streams {
            guard let client = StreamClient(of: stream, in: graph) else { continue }
            for player in players where player.playing {
                if let kind = matcher.match(client, PlayerProcess(pid: player.pid, startTime: 0, flatpak: player.flatpak)) {
                    paused[stream.id] = (player, kind)
                    stopped.insert(stream.id)
                    break
                }
            }
        }
        let held = Set(
            config.playback.holdUnpausable == .mute ? HoldSelection.streams(streams, stopped: stopped, in: graph, input: config.input).map(\.id) : [])
        let callClients = Set(graph.captureStreams.compactMap { CallRouting.callReason(of: $0, config: config.input) != nil ? $0.clientID : nil })
        let entries = streams.map { stream -> Stream in
            let application = stream.props["application.name"]
            func entry(_ action: Action, _ why: String, player: String? = nil, match: String? = nil) -> Stream {
                Stream(stream: UInt64(stream.id), serial: stream.serial, application: application, action: action, player: player, match: match, why: why)
            }
            if let (player, kind) = paused[stream.id] { return entry(.pause, "its player pauses (\(kind.rawValue))", player: player.name, match: kind.rawValue) }
            if held.contains(stream.id) { return entry(.hold, "no player would pause it: muted until the headset returns") }
            if HoldSelection.isCall(stream, callClients: callClients, input: config.input) { return entry(.keep, "a call's: it stays audible") }
            if stream.state != .running { return entry(.leave, "not playing (\(stream.state?.rawValue ?? "state unknown"))") }
            if stream.mute == true { return entry(.leave, "already muted") }
            return entry(.leave, "hold-unpausable = \"leave\"")
        }
        return PlaybackPreview(reason: departure.reason, sink: departure.sink, accessory: departure.accessory.description, streams: entries)
    }
}
