/// The graph as a user needs it for routing: sinks, playback streams and where each plays,
/// and the default sink. `earshot graph --json` prints this; its field names are stable.
public struct RoutingView: Sendable, Hashable, Codable {
    public struct Sink: Sendable, Hashable, Codable {
        public var id: ObjectID
        public var serial: UInt64?
        public var name: String?
        public var description: String?
        public var bus: String?
        public var formFactor: String?
        public var bluetoothAddress: String?
        public var state: NodeState?
        public var isConfiguredDefault: Bool
        public var isEffectiveDefault: Bool
        /// The port it plays to (its device's active route for it, else the route the
        /// judgement names); nil without route information.
        public var port: String?
        public var portType: String?
        /// False when every route for it is unplugged (`available: no`); nil without routes.
        public var available: Bool?
        /// `n-input-ports`, when known.
        public var inputPorts: Int?
        /// `n-output-ports` of a source, when known (nil for sinks).
        public var outputPorts: Int? = nil
    }

    public struct Stream: Sendable, Hashable, Codable {
        public var id: ObjectID
        public var serial: UInt64?
        public var name: String?
        public var application: String?
        public var mediaName: String?
        /// `target.object` when the user pinned the stream to a node.
        public var pinnedTarget: String?
        /// The node names the stream's output ports are linked to.
        public var linkedTo: [String]
    }

    public struct Defaults: Sendable, Hashable, Codable {
        /// `default.configured.audio.sink`: what the user (or Earshot) chose.
        public var configuredSink: String?
        /// `default.audio.sink`: what the session manager uses now.
        public var effectiveSink: String?
        /// `default.configured.audio.source` and `default.audio.source`: the same for the
        /// microphone.
        public var configuredSource: String? = nil
        public var effectiveSource: String? = nil
    }

    public var sinks: [Sink]
    public var streams: [Stream]
    /// Audio sources (microphones; never a sink's monitor), in the same shape as sinks.
    public var sources: [Sink] = []
    /// Capture streams; `linkedTo` names the nodes each records from.
    public var captureStreams: [Stream] = []

    public var defaults: Defaults

    public init(_ graph: Graph) {
        let defaults = Defaults(
            configuredSink: graph.configuredDefaultSinkName, effectiveSink: graph.effectiveDefaultSinkName,
            configuredSource: graph.configuredDefaultSourceName, effectiveSource: graph.effectiveDefaultSourceName)
        self.defaults = defaults
        sinks = graph.sinks.map { node in
            Sink(
                id: node.id, serial: node.serial, name: node.name, description: node.description,
                bus: graph.bus(of: node), formFactor: graph.formFactor(of: node),
                bluetoothAddress: graph.bluetoothAddress(of: node), state: node.state,
                isConfiguredDefault: node.name != nil && node.name == defaults.configuredSink,
                isEffectiveDefault: node.name != nil && node.name == defaults.effectiveSink,
                route: graph.route(of: node), inputPorts: node.inputPorts)
        }
        sources = graph.sources.map { node in
            var source = Sink(
                id: node.id, serial: node.serial, name: node.name, description: node.description,
                bus: graph.bus(of: node), formFactor: graph.formFactor(of: node),
                bluetoothAddress: graph.bluetoothAddress(of: node), state: node.state,
                isConfiguredDefault: node.name != nil && node.name == defaults.configuredSource,
                isEffectiveDefault: node.name != nil && node.name == defaults.effectiveSource,
                route: graph.route(of: node, direction: .input), inputPorts: nil)
            source.outputPorts = node.outputPorts
            return source
        }
        captureStreams = graph.captureStreams.map { node in
            Stream(
                id: node.id, serial: node.serial, name: node.name,
                application: node.props["application.name"], mediaName: node.props["media.name"],
                pinnedTarget: node.props["target.object"] ?? node.props["node.target"],
                linkedTo: graph.linkedSources(of: node.id).map { $0.name ?? "#\($0.id)" })
        }
        streams = graph.playbackStreams.map { node in
            Stream(
                id: node.id, serial: node.serial, name: node.name,
                application: node.props["application.name"], mediaName: node.props["media.name"],
                pinnedTarget: node.props["target.object"] ?? node.props["node.target"],
                linkedTo: graph.linkedTargets(of: node.id).map { $0.name ?? "#\($0.id)" })
        }
    }

    /// A plain-text table for terminals; control characters in names are escaped.
    public func renderText() -> String {
        var lines: [String] = ["Sinks:"]
        if sinks.isEmpty { lines.append("  (none)") }
        for sink in sinks {
            let mark = sink.isEffectiveDefault ? "*" : (sink.isConfiguredDefault ? "+" : " ")
            var details = [sink.bus, sink.formFactor, sink.bluetoothAddress, sink.state?.rawValue].compactMap { $0 }
            if let port = sink.port { details.append("port \"\(port)\"" + (sink.available == false ? " unplugged" : "")) }
            if sink.inputPorts == 0 { details.append("no ports yet") }
            if details.isEmpty { details = ["-"] }
            lines.append(" \(mark) \(pad(String(sink.id), 5)) \(pad(sink.name ?? "?", 44)) \(sink.description ?? "")  [\(details.joined(separator: ", "))]")
        }
        lines.append("Streams:")
        if streams.isEmpty { lines.append("  (none)") }
        for stream in streams {
            let target = stream.linkedTo.isEmpty ? "(not linked)" : stream.linkedTo.joined(separator: ", ")
            let pinned = stream.pinnedTarget.map { "  pinned to \($0)" } ?? ""
            lines.append("   \(pad(String(stream.id), 5)) \(pad(stream.application ?? stream.name ?? "?", 20)) → \(target)\(pinned)")
        }
        lines.append("Sources:")
        if sources.isEmpty { lines.append("  (none)") }
        for source in sources {
            let mark = source.isEffectiveDefault ? "*" : (source.isConfiguredDefault ? "+" : " ")
            var details = [source.bus, source.formFactor, source.bluetoothAddress, source.state?.rawValue].compactMap { $0 }
            if let port = source.port { details.append("port \"\(port)\"" + (source.available == false ? " unplugged" : "")) }
            if source.outputPorts == 0 { details.append("no ports yet") }
            if details.isEmpty { details = ["-"] }
            lines.append(" \(mark) \(pad(String(source.id), 5)) \(pad(source.name ?? "?", 44)) \(source.description ?? "")  [\(details.joined(separator: ", "))]")
        }
        lines.append("Capture streams:")
        if captureStreams.isEmpty { lines.append("  (none)") }
        for stream in captureStreams {
            let origin = stream.linkedTo.isEmpty ? "(not linked)" : stream.linkedTo.joined(separator: ", ")
            let pinned = stream.pinnedTarget.map { "  pinned to \($0)" } ?? ""
            lines.append("   \(pad(String(stream.id), 5)) \(pad(stream.application ?? stream.name ?? "?", 20)) ← \(origin)\(pinned)")
        }
        lines.append("Default sink: configured \(defaults.configuredSink ?? "(none)"), effective \(defaults.effectiveSink ?? "(none)")")
        lines.append("Default source: configured \(defaults.configuredSource ?? "(none)"), effective \(defaults.effectiveSource ?? "(none)")")
        lines.append("(* effective default, + configured default)")
        // Names, descriptions and port labels are any client's: escaped (TerminalText).
        return TerminalText.lines(lines)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

extension RoutingView.Sink {
    init(
        id: ObjectID, serial: UInt64?, name: String?, description: String?, bus: String?, formFactor: String?,
        bluetoothAddress: String?, state: NodeState?, isConfiguredDefault: Bool, isEffectiveDefault: Bool, route: NodeRoute?, inputPorts: Int?
    ) {
        self.init(
            id: id, serial: serial, name: name, description: description, bus: bus, formFactor: formFactor,
            bluetoothAddress: bluetoothAddress, state: state, isConfiguredDefault: isConfiguredDefault,
            isEffectiveDefault: isEffectiveDefault, port: route?.port?.label, portType: route?.port?.portType,
            available: route.map(\.isAvailable), inputPorts: inputPorts)
    }
}
