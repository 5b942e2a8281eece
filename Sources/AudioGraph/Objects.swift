/// A PipeWire global id. Ids are reused as soon as an object goes: compare objects by
/// `serial` when identity over time matters.
public typealias ObjectID = UInt32

/// PipeWire properties: every value is a string on the wire.
public typealias Properties = [String: String]

extension Dictionary where Key == String, Value == String {
    /// `object.serial`, which PipeWire never reuses (0.3.65 puts it in the props).
    public var objectSerial: UInt64? { self["object.serial"].flatMap { UInt64($0) } }
}

public enum NodeState: String, Sendable, Hashable, Codable, CaseIterable {
    case error, creating, suspended, idle, running
}

public struct Node: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var state: NodeState?
    public var props: Properties
    /// `n-input-ports`: how many input ports the node has now; nil when not known (a graph
    /// without the field). A sink with none cannot take audio yet.
    public var inputPorts: Int?
    /// `n-output-ports`: the same for output ports; a source with none cannot give audio yet.
    public var outputPorts: Int?
    /// The `mute` of the node's `Props` param (what `pactl set-sink-input-mute` sets): known
    /// for playback streams only, nil for every other node and for a stream whose Props have
    /// not come (or have no mute). Live and in a pw-dump alike only playback streams' Props
    /// are read, so a replayed graph says what the live one said.
    public var mute: Bool?

    public init(
        id: ObjectID, state: NodeState? = nil, props: Properties = [:], inputPorts: Int? = nil, outputPorts: Int? = nil,
        mute: Bool? = nil
    ) {
        self.id = id
        self.state = state
        self.props = props
        self.inputPorts = inputPorts
        self.outputPorts = outputPorts
        self.mute = mute
    }

    public var serial: UInt64? { props.objectSerial }
    public var name: String? { props["node.name"] }
    public var mediaClass: String? { props["media.class"] }
    public var description: String? { props["node.description"] ?? props["node.nick"] }
    /// The device this node belongs to (ALSA, BlueZ); virtual sinks have none.
    public var deviceID: ObjectID? { props["device.id"].flatMap { ObjectID($0) } }
    public var clientID: ObjectID? { props["client.id"].flatMap { ObjectID($0) } }
    /// An output device node: `Audio/Sink`, or `Audio/Sink/Virtual` (see `isVirtualSink`).
    public var isAudioSink: Bool { mediaClass == "Audio/Sink" || mediaClass == "Audio/Sink/Virtual" }
    /// A sink of no hardware: `Audio/Sink/Virtual`, `node.virtual = true`, or an `Audio/Sink`
    /// without a device (null sinks, EasyEffects', filter-chain and loopback sinks). Only the
    /// user or a rule chooses one (docs/policy.md §1). A null sink that says what it stands
    /// for (`device.form-factor`, `device.bus`, `api.bluez5.address`: test and bridge sinks)
    /// is taken at its word.
    public var isVirtualSink: Bool {
        guard isAudioSink else { return false }
        if mediaClass == "Audio/Sink/Virtual" || props["node.virtual"] == "true" { return true }
        guard deviceID == nil else { return false }
        return props["device.form-factor"] == nil && props["device.bus"] == nil && props["api.bluez5.address"] == nil
            && props["device.api"] == nil
    }
    public var isPlaybackStream: Bool { mediaClass == "Stream/Output/Audio" }

    /// An input device node (a microphone): `Audio/Source`, or `Audio/Source/Virtual` (see
    /// `isVirtualSource`). A sink's monitor is never one: PipeWire gives monitors as ports of
    /// the sink, and a node that says it is a monitor (`stream.monitor`, a `.monitor` name as
    /// the PulseAudio layer spells them) is left out.
    public var isAudioSource: Bool {
        guard mediaClass == "Audio/Source" || mediaClass == "Audio/Source/Virtual" else { return false }
        return props["stream.monitor"] != "true" && !(name?.hasSuffix(".monitor") ?? false)
    }
    /// A source of no hardware (a filter chain's echo-cancelled or noise-suppressed source, a
    /// loopback): as `isVirtualSink` says for sinks.
    /// Unlike a sink, an `Audio/Source/Virtual` that states what it stands for (a form factor,
    /// a bus, an address) is taken at its word too: PipeWire's null node makes a usable
    /// source only with that class (test and bridge microphones).
    public var isVirtualSource: Bool {
        guard isAudioSource else { return false }
        if props["node.virtual"] == "true" { return true }
        guard deviceID == nil else { return false }
        return props["device.form-factor"] == nil && props["device.bus"] == nil && props["api.bluez5.address"] == nil
            && props["device.api"] == nil
    }
    /// A capture stream (an application recording): `Stream/Input/Audio`.
    public var isCaptureStream: Bool { mediaClass == "Stream/Input/Audio" }
}

public enum PortDirection: String, Sendable, Hashable, Codable {
    case input, output
}

public struct Port: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var direction: PortDirection
    public var props: Properties

    public init(id: ObjectID, direction: PortDirection, props: Properties = [:]) {
        self.id = id
        self.direction = direction
        self.props = props
    }

    public var serial: UInt64? { props.objectSerial }
    public var nodeID: ObjectID? { props["node.id"].flatMap { ObjectID($0) } }
    /// Channel position (`FL`, `FR`, `MONO`…), the key links are matched on.
    public var channel: String? { props["audio.channel"] }
    public var name: String? { props["port.name"] }
    public var isMonitor: Bool { props["port.monitor"] == "true" }
}

public enum LinkState: String, Sendable, Hashable, Codable, CaseIterable {
    case error, unlinked, `init`, negotiating, allocating, paused, active
}

public struct Link: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var outputNode: ObjectID
    public var outputPort: ObjectID
    public var inputNode: ObjectID
    public var inputPort: ObjectID
    public var state: LinkState?
    public var props: Properties

    public init(
        id: ObjectID, outputNode: ObjectID, outputPort: ObjectID, inputNode: ObjectID,
        inputPort: ObjectID, state: LinkState? = nil, props: Properties = [:]
    ) {
        self.id = id
        self.outputNode = outputNode
        self.outputPort = outputPort
        self.inputNode = inputNode
        self.inputPort = inputPort
        self.state = state
        self.props = props
    }

    public var serial: UInt64? { props.objectSerial }
}

/// A device (ALSA card, BlueZ device): its properties and, when it publishes them, its routes.
public struct Device: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var props: Properties
    /// `EnumRoute`, `Route` and `Profile`; nil when the device publishes none (or a dump
    /// left them out): its nodes are then judged available.
    public var routes: DeviceRoutes?
    public init(id: ObjectID, props: Properties = [:], routes: DeviceRoutes? = nil) {
        self.id = id
        self.props = props
        self.routes = routes
    }
    public var serial: UInt64? { props.objectSerial }
}

public struct Client: Sendable, Hashable, Codable {
    public var id: ObjectID
    public var props: Properties
    public init(id: ObjectID, props: Properties = [:]) {
        self.id = id
        self.props = props
    }
    public var serial: UInt64? { props.objectSerial }
}
