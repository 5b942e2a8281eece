import WireFields
import AudioGraph

/// A capture stream that is a call (docs/policy.md §8 `bluetooth-microphone = "calls"`) and
/// the source Earshot points it at: the worn headset's microphone, kept out of the default
/// source so that music keeps A2DP.
public struct CallStream: WireRecord, Hashable {
    /// The stream's node id and serial (ids are reused; the serial is not).
    public var stream: ObjectID
    public var serial: UInt64?
    /// `application.name` and `media.role`, as the stream says them.
    public var application: String?
    public var role: String?
    /// Why it is a call: `media.role = Communication`, or `application.name "Firefox" is in
    /// call-applications`.
    public var why: String
    /// The node.name of the source it records from.
    public var source: String

    /// The id as the wire carries it.
    var wireStream: UInt64 {
        get { UInt64(stream) }
        set { stream = ObjectID(truncatingIfNeeded: newValue) }
    }

    public static let wireFields: [WireField<CallStream>] = [
        .field("stream", \.wireStream, "the capture stream's node id"),
        .nullable("serial", \.serial, "its `object.serial` (ids are reused; serials are not)"),
        .nullable("application", \.application, "its `application.name`"),
        .nullable("role", \.role, "its `media.role`"),
        .field("why", \.why, "why it is a call: `media.role = Communication`, or its `application.name` is in `[input] call-applications`"),
        .field("source", \.source, "the `node.name` of the source it is pointed at (the worn headset's microphone)"),
    ]
    public static let wireBlank = CallStream(stream: 0, serial: nil, application: nil, role: nil, why: "", source: "")
}

/// A capture stream Earshot moved in one decision: pointed at the call microphone, or given
/// back to the default source.
public struct StreamMove: WireRecord, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A call started (or the call microphone changed): pointed at `to`.
        case call
        /// Its call microphone is no longer where calls go (the headset came off, went, or
        /// the stream stopped being a call): back to the default source.
        case back
        /// A target naming the call microphone that Earshot finds on a stream it did not point
        /// (an earlier Earshot's, before a restart) where no call should go now: removed, back
        /// to the default source.
        case staleTarget = "stale-target"
    }

    /// Open on the wire: a newer peer's kind is kept, not refused.
    public var kind: OpenEnum<Kind>
    public var stream: ObjectID
    public var serial: UInt64?
    public var application: String?
    public var role: String?
    /// The source it recorded from (nil: the default source) and the one it records from now.
    public var from: String?
    public var to: String?

    public init(kind: Kind, stream: ObjectID, serial: UInt64?, application: String?, role: String?, from: String?, to: String?) {
        self.kind = OpenEnum(kind)
        self.stream = stream
        self.serial = serial
        self.application = application
        self.role = role
        self.from = from
        self.to = to
    }

    var wireStream: UInt64 {
        get { UInt64(stream) }
        set { stream = ObjectID(truncatingIfNeeded: newValue) }
    }

    public static let wireFields: [WireField<StreamMove>] = [
        .field("kind", \.kind, "`call` (a call started, or where calls go changed: pointed at `to`), `back` (its call microphone is no longer where calls go: back to the default source), `stale-target` (a target the session manager restored from an earlier call, where no call goes now: removed)"),
        .field("stream", \.wireStream, "the capture stream's node id"),
        .nullable("serial", \.serial, "its `object.serial`"),
        .nullable("application", \.application, "its `application.name`"),
        .nullable("role", \.role, "its `media.role`"),
        .nullable("from", \.from, "the source it recorded from; null: the default source"),
        .nullable("to", \.to, "the source it records from now; null: the default source"),
    ]
    public static let wireBlank = StreamMove(kind: .call, stream: 0, serial: nil, application: nil, role: nil, from: nil, to: nil)
}

/// The calls of one decision (§8): where calls record from, the streams pointed there, and
/// this decision's moves.
public struct CallRoutingOutcome: WireRecord, Hashable {
    /// The Bluetooth microphone calls go to (node.name); nil when none: calls then record
    /// from the default source as any stream.
    public var source: String?
    public var streams: [CallStream] = []
    public var moves: [StreamMove] = []

    public init(source: String?, streams: [CallStream] = [], moves: [StreamMove] = []) {
        self.source = source
        self.streams = streams
        self.moves = moves
    }

    public var isEmpty: Bool { source == nil && streams.isEmpty && moves.isEmpty }

    public static let wireFields: [WireField<CallRoutingOutcome>] = [
        .nullable("source", \.source, "the Bluetooth microphone calls record from (`node.name`); null when calls go to the default source as any recording"),
        .field("streams", \.streams, "the capture streams pointed there now"),
        .field("moves", \.moves, "the streams this decision moved"),
    ]
    public static let wireBlank = CallRoutingOutcome(source: nil)
}

/// What the daemon puts into PipeWire for calls (§8): each stream's target, as the engine
/// wants it now. Declarative, so applying twice writes nothing twice.
public struct StreamTargets: Sendable, Hashable {
    public struct Target: Sendable, Hashable {
        public var serial: UInt64?
        /// The metadata key (`target.object`).
        public var key: String
        /// The value: the source's node.name.
        public var value: String

        public init(serial: UInt64?, key: String = "target.object", value: String) {
            self.serial = serial
            self.key = key
            self.value = value
        }
    }

    /// Streams pointed at the call microphone: their `target.object` must say it.
    public var pointed: [ObjectID: Target] = [:]
    /// Targets taken back (the call went back to the default source, or a stale restore):
    /// removed while the metadata still shows them.
    public var released: [ObjectID: Target] = [:]

    public init(pointed: [ObjectID: Target] = [:], released: [ObjectID: Target] = [:]) {
        self.pointed = pointed
        self.released = released
    }

    public var isEmpty: Bool { pointed.isEmpty && released.isEmpty }
}

/// Which capture streams are calls and where each is pointed (§8): a part that owns its state
/// (the streams it points, the targets it gave back, the headsets switched for calls) and
/// decides one thing, leaving the writing to the daemon.
struct CallRouting: Sendable, Hashable {
    struct Pointed: Sendable, Hashable {
        var serial: UInt64?
        var source: String
        var key = "target.object"
    }

    /// The targets as the daemon applies them.
    var targets: StreamTargets {
        var result = StreamTargets()
        for (id, entry) in pointed { result.pointed[id] = StreamTargets.Target(serial: entry.serial, key: entry.key, value: entry.source) }
        for (id, entry) in releasing { result.released[id] = StreamTargets.Target(serial: entry.serial, key: entry.key, value: entry.source) }
        return result
    }

    /// The streams pointed now, by node id.
    private(set) var pointed: [ObjectID: Pointed] = [:]
    /// Targets Earshot took back whose removal the metadata does not show yet: not someone
    /// else's.
    private var releasing: [ObjectID: Pointed] = [:]
    /// Bluetooth devices that went to the hands-free profile while a call recorded: their
    /// microphone stays the calls' until they play music again.
    private(set) var heldForCalls: Set<ObjectID> = []

    /// What a decision reads of each capture stream, by node id: a change of it decides again.
    private var seen: [ObjectID: StreamSignature] = [:]
    /// The capture streams that are calls: a decision looks at these, the pointed and the
    /// targeted ones, never at every stream.
    private var callIDs: Set<ObjectID> = []
    /// Whether `seen` and `callIDs` describe the graph (false after the config or the whole
    /// graph was replaced: the next decision reads every capture stream once).
    private var scanned = false

    /// What calls read of a capture stream, read once per change of it.
    struct StreamSignature: Sendable, Hashable {
        var serial: UInt64?
        /// Why it is a call; nil when it is none.
        var callReason: String?
        var choosesItsOwnSource: Bool
        var application: String?
        var role: String?
        var isCall: Bool { callReason != nil }
    }

    /// The streams and the call list must be read afresh (the config or the whole graph changed).
    mutating func invalidate() { scanned = false }

    /// Reads every capture stream once, when the last reading is stale.
    mutating func scan(_ graph: Graph, config: InputConfig) {
        guard !scanned else { return }
        seen = [:]
        callIDs = []
        for stream in graph.captureStreams { _ = note(stream, config: config) }
        scanned = true
    }

    /// Whether a capture stream that is a call records now.
    var anyCall: Bool { !callIDs.isEmpty }

    /// Notes a capture stream's properties; true when calls must be decided again (a new
    /// stream, or one whose call-ness changed). Without `routing`, no stream matters.
    mutating func noteStream(_ node: Node, routing: Bool, config: InputConfig) -> Bool {
        guard scanned else { return routing }
        return note(node, config: config) && routing
    }

    private mutating func note(_ node: Node, config: InputConfig) -> Bool {
        let signature = StreamSignature(
            serial: node.serial, callReason: Self.callReason(of: node, config: config), choosesItsOwnSource: Self.choosesItsOwnSource(node),
            application: node.props["application.name"], role: node.props["media.role"])
        let before = seen.updateValue(signature, forKey: node.id)
        if signature.isCall { callIDs.insert(node.id) } else { callIDs.remove(node.id) }
        return before != signature && (signature.isCall || before?.isCall == true || pointed[node.id] != nil)
    }

    /// A node went: true when it was a call or pointed (calls are decided again).
    mutating func forgetStream(_ id: ObjectID) -> Bool {
        let was = seen.removeValue(forKey: id)
        callIDs.remove(id)
        return was?.isCall == true || pointed[id] != nil
    }

    /// Why `node` is a call, or nil: a capture stream (not a monitor, not a filter's own
    /// stream, not WirePlumber's Bluetooth loopback) whose `media.role` is `Communication`
    /// (PulseAudio's `phone`) or whose `application.name` is a call application.
    static func callReason(of node: Node, config: InputConfig) -> String? {
        guard node.isCaptureStream, node.props["stream.monitor"] != "true", node.props["node.link-group"] == nil,
            node.props["bluez5.loopback"] != "true"
        else { return nil }
        if node.props["media.role"] == "Communication" { return "media.role = Communication" }
        if let application = node.props["application.name"], config.callApplications.contains(application) {
            return "application.name \"\(application)\" is in call-applications"
        }
        return nil
    }

    /// A stream that chose its source itself (its own `target.object`, or `node.dont-move`):
    /// never pointed elsewhere.
    static func choosesItsOwnSource(_ node: Node) -> Bool {
        if node.props["node.dont-move"] == "true" { return true }
        guard let pin = node.props["target.object"] ?? node.props["node.target"] else { return false }
        return !["", "-1", "auto"].contains(pin)
    }

    /// The stream's target in the `default` metadata (`target.object`, else `target.node`),
    /// and which key holds it; `-1` is none.
    static func metadataTarget(of stream: ObjectID, in metadata: Metadata?) -> (key: String, value: String)? {
        guard let metadata else { return nil }
        for key in ["target.object", "target.node"] {
            // `-1` is none; `auto` names no node (pw-record's own default, which Earshot pins for
            // WirePlumber 0.4): the stream follows the default either way.
            if let entry = metadata[stream, key], !["-1", "", "auto"].contains(entry.value) { return (key, entry.value) }
        }
        return nil
    }

    /// Keeps `heldForCalls` in step (§8): a Bluetooth device playing music while a call
    /// records is held (a switch to hands-free now is for the call); one playing music with no
    /// call is let go; a device that went is forgotten.
    mutating func noteProfiles(handsFree: Set<ObjectID>, music: Set<ObjectID>, callRecording: Bool) {
        for device in music where !handsFree.contains(device) {
            if callRecording { heldForCalls.insert(device) } else { heldForCalls.remove(device) }
        }
        heldForCalls = heldForCalls.filter { handsFree.contains($0) || music.contains($0) }
    }

    /// Points every call at `callSource` and every other stream Earshot pointed back at the
    /// default source. `isCallMicrophone`: whether a node name is a Bluetooth microphone kept
    /// for calls, worn or not (a target naming one, on a stream Earshot did not point, is an
    /// earlier Earshot's). Reads the calls, the pointed streams and the streams with a target,
    /// in id order; `scan` first.
    mutating func decide(graph: Graph, config: InputConfig, callSource: String?, isCallMicrophone: (String) -> Bool) -> CallRoutingOutcome {
        var outcome = CallRoutingOutcome(source: callSource)
        let metadata = graph.defaultMetadata
        var ids = Array(callIDs)
        ids.append(contentsOf: pointed.keys)
        ids.append(contentsOf: releasing.keys)
        if let metadata {
            for key in metadata.entries.keys where key.subject != 0 && (key.key == "target.object" || key.key == "target.node") { ids.append(key.subject) }
        }
        ids.sort()
        let nodes = graph.nodes
        var last: ObjectID?
        // Streams that went (or whose id now names another) are forgotten.
        // (Checked before filtering: during a call this runs on every decision, and a filter
        // always makes a new table.)
        func live(_ id: ObjectID, _ entry: Pointed) -> Bool { graph.nodes[id].map { $0.isCaptureStream && $0.serial == entry.serial } ?? false }
        func stillShown(_ id: ObjectID, _ entry: Pointed) -> Bool { live(id, entry) && metadata?[id, entry.key]?.value == entry.source }
        if pointed.contains(where: { !live($0.key, $0.value) }) { pointed = pointed.filter { live($0.key, $0.value) } }
        if releasing.contains(where: { !stillShown($0.key, $0.value) }) { releasing = releasing.filter { stillShown($0.key, $0.value) } }
        for id in ids where id != last {
            last = id
            guard let stream = nodes[id], stream.isCaptureStream else { continue }
            let known = seen[stream.id]
            let reason = known?.callReason
            let ownSource = known?.choosesItsOwnSource ?? Self.choosesItsOwnSource(stream)
            let mine = pointed[stream.id]
            let target = Self.metadataTarget(of: stream.id, in: metadata)
            if let target, target.value != mine?.source, target.value != releasing[stream.id]?.source {
                // A target Earshot did not write: the name of a Bluetooth input kept for calls is
                // one an earlier Earshot wrote (a restart during a call; WirePlumber saves no
                // name for the next stream); anything else is someone's choice (pavucontrol and
                // WirePlumber's restore of it write serials and ids), which is theirs.
                let restored = target.key == "target.object" && isCallMicrophone(target.value) ? target.value : nil
                guard let restored else {
                    if mine != nil { pointed[stream.id] = nil }
                    continue
                }
                if reason != nil, callSource == restored, !ownSource {
                    pointed[stream.id] = Pointed(serial: stream.serial, source: restored)
                    outcome.streams.append(call(stream, reason: reason ?? "", source: restored))
                } else {
                    pointed[stream.id] = nil
                    releasing[stream.id] = Pointed(serial: stream.serial, source: target.value, key: target.key)
                    outcome.moves.append(move(.staleTarget, stream, from: restored, to: nil))
                }
                continue
            }
            let desired = reason != nil && !ownSource ? callSource : nil
            if desired != mine?.source {
                if let desired {
                    pointed[stream.id] = Pointed(serial: stream.serial, source: desired)
                    releasing[stream.id] = nil
                    outcome.moves.append(move(.call, stream, from: mine?.source, to: desired))
                } else if let mine {
                    pointed[stream.id] = nil
                    releasing[stream.id] = mine
                    outcome.moves.append(move(.back, stream, from: mine.source, to: nil))
                }
            }
            if let desired, let reason { outcome.streams.append(call(stream, reason: reason, source: desired)) }
        }
        return outcome
    }

    private func call(_ stream: Node, reason: String, source: String) -> CallStream {
        let known = seen[stream.id]
        return CallStream(
            stream: stream.id, serial: stream.serial, application: known?.application ?? stream.props["application.name"],
            role: known?.role ?? stream.props["media.role"], why: reason, source: source)
    }

    private func move(_ kind: StreamMove.Kind, _ stream: Node, from: String?, to: String?) -> StreamMove {
        let known = seen[stream.id]
        return StreamMove(
            kind: kind, stream: stream.id, serial: stream.serial, application: known?.application ?? stream.props["application.name"],
            role: known?.role ?? stream.props["media.role"], from: from, to: to)
    }
}
