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
    /// Released by a return: unmuted once it plays on `sink` again.
    public var releasing = false

    public init(stream: ObjectID, serial: UInt64?, application: String?, name: String?, sink: String, accessory: AccessoryIdentity) {
        self.stream = stream
        self.serial = serial
        self.application = application
        self.name = name
        self.sink = sink
        self.accessory = accessory
    }

    init(_ node: Node, sink: String, accessory: AccessoryIdentity) {
        self.init(
            stream: node.id, serial: node.serial, application: node.props["application.name"],
            name: node.props["media.name"] ?? node.name, sink: sink, accessory: accessory)
    }

    var wire: ControlWire.PlaybackStream {
        ControlWire.PlaybackStream(stream: UInt64(stream), serial: serial, application: application, name: name)
    }

    /// Still the stream Earshot muted, and still muted: nobody ended, replaced or unmuted it.
    func isUntouched(in graph: Graph) -> Bool {
        guard let node = graph.nodes[stream], node.isPlaybackStream, node.serial == serial else { return false }
        return node.mute == true
    }
}

/// The streams Earshot holds silent (docs/policy.md §7), by stream id. A user who unmutes or
/// ends one takes it back: it is forgotten, never touched again. The rest are unmuted when their
/// headset returns (once they play on it again), when the daemon stops, or at the next start
/// after a crash (the state file keeps them).
public struct StreamHolds: Sendable, Hashable {
    /// The most streams held at once; past it, a departure holds no more.
    public static let limit = 4096

    public private(set) var held: [ObjectID: HeldStream] = [:]

    public init(_ held: [HeldStream] = []) {
        for entry in held.prefix(Self.limit) { self.held[entry.stream] = entry }
    }

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
        guard held.values.contains(where: \.releasing) else { return due }
        // Where each held stream plays now: one pass over the links.
        var playsOn: [ObjectID: Set<String>] = [:]
        for link in graph.links.values where held[link.outputNode]?.releasing == true {
            if let sink = graph.nodes[link.inputNode]?.name { playsOn[link.outputNode, default: []].insert(sink) }
        }
        for (id, entry) in held where entry.releasing {
            guard entry.isUntouched(in: graph) else {
                held[id] = nil
                continue
            }
            if playsOn[id]?.contains(entry.sink) == true {
                held[id] = nil
                due.append(entry)
            }
        }
        return due.sorted { $0.stream < $1.stream }
    }

    /// Every stream still held and untouched: taken (at stop, or at start after a crash).
    public mutating func takeAll(in graph: Graph) -> [HeldStream] {
        let untouched = all.filter { $0.isUntouched(in: graph) }
        held = [:]
        return untouched
    }

    /// A graph change: a stream that went, or was unmuted by someone, is no longer Earshot's.
    /// True when something was forgotten (the state file should be saved).
    public mutating func note(_ change: GraphChange, in graph: Graph) -> Bool {
        switch change {
        case .removed(let id):
            return held.removeValue(forKey: id) != nil
        case .node(let node):
            guard let entry = held[node.id] else { return false }
            if node.serial != entry.serial || node.mute == false {
                held[node.id] = nil
                return true
            }
            return false
        default:
            return false
        }
    }
}
