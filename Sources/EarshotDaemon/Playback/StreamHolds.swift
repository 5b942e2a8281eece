import AudioGraph
import ControlProtocol
import RoutingPolicy

/// A playback stream Earshot muted because a headset left and no pause stopped it.
public struct HeldStream: Sendable, Hashable {
    public var stream: ObjectID
    /// Its `object.serial`: the id alone may name a later stream (ids are reused at once).
    public var serial: UInt64?
    public var application: String?
    public var name: String?
    /// The sink it played on, and the accessory whose departure held it.
    public var sink: String
    public var accessory: AccessoryIdentity
    /// The key the session manager remembers the stream's volume and mute by
    /// (`sessionManagerKey`): it gives the mute Earshot set to the key's next streams.
    public var key: String?
    /// The paused player's bus connection, for a stream muted only while its player's Pause
    /// takes effect (a *drain*: audio already in flight when the player said Paused would reach
    /// the new sink); nil for a stream held because no pause stopped it.
    public var player: String?
    /// Released by a return: unmuted once it plays on `sink` again.
    public var releasing = false
    /// A drain whose stream fell silent (stopped running) or whose player plays again: unmuted
    /// wherever it plays.
    public var silent = false

    public var isDrain: Bool { player != nil }
    /// For a drain: the number of the last status signal when its player's Pause was answered
    /// (`MediaPlayer.pausedAfterSignal`): a "Playing" numbered at or below it was sent before
    /// the pause (its start's), not by the user after.
    public var pausedAfterSignal: UInt64 = 0
    /// The graph has shown it muted since Earshot muted it. Until then a `mute: false` in the
    /// graph is the state before the mute, not someone's unmute (the echo comes a moment after
    /// the stream's client took the request, and may come after its other changes).
    public var confirmed = false

    public init(
        stream: ObjectID, serial: UInt64?, application: String?, name: String?, sink: String, accessory: AccessoryIdentity, key: String? = nil
    ) {
        self.key = key
        self.stream = stream
        self.serial = serial
        self.application = application
        self.name = name
        self.sink = sink
        self.accessory = accessory
    }

    init(_ node: Node, sink: String, accessory: AccessoryIdentity, player: String? = nil) {
        self.init(
            stream: node.id, serial: node.serial, application: node.props["application.name"],
            name: node.props["media.name"] ?? node.name, sink: sink, accessory: accessory, key: Self.sessionManagerKey(of: node))
        self.player = player
    }

    /// WirePlumber's key for a playback stream's saved Props (0.4's `restore-stream`, 0.5's
    /// `state-stream`: `Output/Audio:` and the first of these properties the stream has).
    /// Both save a mute set on any stream and set it on every later stream of the key
    /// (docs/pipewire-facts.md): Earshot's hold reaches the key's next streams.
    static func sessionManagerKey(of node: Node) -> String? {
        for property in ["media.role", "application.id", "application.name", "media.name", "node.name"] {
            if let value = node.props[property] { return "Output/Audio:\(property):\(value)" }
        }
        return nil
    }

    var wire: ControlWire.PlaybackStream {
        ControlWire.PlaybackStream(stream: UInt64(stream), serial: serial, application: application, name: name)
    }

    /// Still the stream Earshot muted, and still muted (or its mute not shown yet): nobody
    /// ended, replaced or unmuted it.
    func isUntouched(in graph: Graph) -> Bool {
        guard let node = graph.nodes[stream], node.isPlaybackStream, node.serial == serial else { return false }
        return node.mute == true || !confirmed
    }
}

/// The streams Earshot holds silent (docs/policy.md §7), by stream id. A user who unmutes, moves
/// or ends one takes it back: it is forgotten, never touched again. The rest are unmuted when their
/// headset returns (once they play on it again), when the daemon stops, or at the next start
/// after a crash (the state file keeps them).
public struct StreamHolds: Sendable, Hashable {
    /// The most streams held at once; past it, a departure holds no more.
    public static let limit = 4096
    /// The most streams whose start is followed (a stream gone leaves the set).
    static let reportLimit = 65_536

    public private(set) var held: [ObjectID: HeldStream] = [:]
    /// Keys of streams held before a restart (a crash) that were gone at the start: the session
    /// manager may still give their mute to the key's next stream.
    public private(set) var orphanKeys: Set<String> = []
    /// Streams whose mute the graph has shown (a stream's first report is its start).
    private var reported: Set<ObjectID> = []
    /// Streams that started muted by the session manager's memory of Earshot's hold: to unmute.
    private(set) var startedMuted: [ObjectID] = []

    /// `held`: restored from the state file (their mutes were shown before they were saved).
    public init(_ held: [HeldStream] = [], orphanKeys: Set<String> = []) {
        for var entry in held.prefix(Self.limit) {
            entry.confirmed = true
            self.held[entry.stream] = entry
        }
        self.orphanKeys = Set(orphanKeys.prefix(Self.limit))
    }

    /// Keys Earshot's mutes may have been saved under: the held streams' and the orphans'.
    public var keys: Set<String> { orphanKeys.union(held.values.compactMap(\.key)) }

    public var isEmpty: Bool { held.isEmpty }
    public var all: [HeldStream] { held.values.sorted { $0.stream < $1.stream } }
    var room: Int { max(0, Self.limit - held.count) }

    public mutating func add(_ entry: HeldStream) {
        guard held[entry.stream] != nil || held.count < Self.limit else { return }
        held[entry.stream] = entry
    }

    /// The accessory is back: its streams are unmuted once they play on its sink again.
    public mutating func release(_ accessory: AccessoryIdentity) {
        for (id, entry) in held where entry.accessory == accessory { held[id]?.releasing = true }
    }

    /// The releasing streams that play on their sink in `graph` now: taken, to be unmuted.
    /// Those someone took back (ended, unmuted) are dropped on the way.
    public mutating func due(in graph: Graph) -> [HeldStream] {
        var due: [HeldStream] = []
        guard held.values.contains(where: { $0.releasing || $0.silent }) else { return due }
        // Where each held stream plays now: one pass over the links.
        var playsOn: [ObjectID: Set<String>] = [:]
        for link in graph.links.values where held[link.outputNode]?.releasing == true {
            if let sink = graph.nodes[link.inputNode]?.name { playsOn[link.outputNode, default: []].insert(sink) }
        }
        for (id, entry) in held where entry.releasing || entry.silent {
            guard entry.isUntouched(in: graph) else {
                held[id] = nil
                continue
            }
            // Its mute not shown yet: given back once it is (an unmute racing the mute's echo
            // would read as the user's).
            guard entry.confirmed else { continue }
            if entry.silent || playsOn[id]?.contains(entry.sink) == true {
                held[id] = nil
                due.append(entry)
            }
        }
        return due.sorted { $0.stream < $1.stream }
    }

    /// A player plays again (its user's doing, or Earshot's resume): its drained streams go.
    public mutating func playerPlays(_ connection: String, signal: UInt64 = .max) {
        for (id, entry) in held where entry.player == connection && signal > entry.pausedAfterSignal { held[id]?.silent = true }
    }

    /// Every stream still held and untouched: taken (at stop, or at start after a crash).
    /// With `keepingKeys` (a start), the keys of those gone stay as orphans.
    public mutating func takeAll(in graph: Graph, keepingKeys: Bool = false) -> [HeldStream] {
        let untouched = all.filter { $0.isUntouched(in: graph) }
        if keepingKeys { orphanKeys.formUnion(all.filter { graph.nodes[$0.stream]?.serial != $0.serial }.compactMap(\.key)) }
        held = [:]
        return untouched
    }

    /// The streams that started muted under a key of Earshot's since the last call: each is
    /// unmuted (a stream that starts is the user's, not Earshot's to hold). An orphan key is
    /// forgotten once one of its streams is unmuted (the session manager then saves the unmute).
    public mutating func takeStartedMuted(in graph: Graph) -> [ObjectID] {
        defer { startedMuted = [] }
        let due = startedMuted.filter { graph.nodes[$0]?.mute == true && held[$0] == nil }
        for id in due { if let key = graph.nodes[id].flatMap(HeldStream.sessionManagerKey) { orphanKeys.remove(key) } }
        return due
    }

    /// A graph change: a stream that went, or was unmuted by someone, is no longer Earshot's.
    /// True when something was forgotten (the state file should be saved).
    public mutating func note(_ change: GraphChange, in graph: Graph) -> Bool {
        switch change {
        case .removed(let id):
            reported.remove(id)
            return held.removeValue(forKey: id) != nil
        case .node(let node):
            if node.isPlaybackStream, node.mute != nil, reported.count < Self.reportLimit, reported.insert(node.id).inserted, node.mute == true,
                held[node.id] == nil, let key = HeldStream.sessionManagerKey(of: node), keys.contains(key)
            {
                startedMuted.append(node.id)
            }
            guard let entry = held[node.id] else { return false }
            if node.serial == entry.serial, node.mute == true { held[node.id]?.confirmed = true }
            if entry.isDrain, node.serial == entry.serial, node.state != .running, node.state != nil { held[node.id]?.silent = true }
            if node.serial != entry.serial || (node.mute == false && entry.confirmed) {
                held[node.id] = nil
                return true
            }
            return false
        case .metadataProperty(_, let subject, let key, _, let value):
            // Moved by someone (pavucontrol, pactl move-sink-input): theirs. Earshot's own pin
            // (WirePlumber 0.4: the stream's own target.object, copied) is no move.
            guard held[subject] != nil, let key, key == "target.object" || key == "target.node", let value, !["", "-1"].contains(value),
                graph.nodes[subject]?.props[key] != value
            else { return false }
            held[subject] = nil
            return true
        default:
            return false
        }
    }
}
