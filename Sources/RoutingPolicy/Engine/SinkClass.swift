import AudioGraph

/// The kind of output a sink is. The class order and the personal classes of the config are
/// lists of these.
public enum SinkClass: String, Sendable, Hashable, CaseIterable, Codable {
    case headphones, headset, usb, speaker, line, `internal`, digital, hdmi, other

    /// Line outputs (a desktop's green jack, an amplifier) rank with speakers; S/PDIF and
    /// HDMI/DisplayPort, whose far end nobody can see, last.
    public static let defaultOrder: [SinkClass] = [.headphones, .headset, .usb, .speaker, .line, .internal, .other, .digital, .hdmi]
    /// Outputs that belong to one person: when one arrives, it takes the output. A USB sink is
    /// personal only when its port or form factor says headphones or headset (then its class is
    /// that); a USB DAC or a USB microphone's S/PDIF output is not.
    public static let defaultPersonal: [SinkClass] = [.headphones, .headset]

    /// The class, from the most to the least specific evidence (docs/policy.md §2.6): the active
    /// route's `port.type` (what the card says is plugged in), then the form factor, then
    /// HDMI/DisplayPort/S/PDIF in the profile or node name (ALSA without routes), and only then
    /// the bus.
    public static func of(_ node: Node, in graph: Graph) -> SinkClass {
        of(node, in: graph, route: graph.route(of: node))
    }

    /// The class, with the node's route already judged (`Graph.route(of:)`; nil without route
    /// information).
    public static func of(_ node: Node, in graph: Graph, route: NodeRoute?) -> SinkClass {
        if let portType = route?.port?.portType, let fromPort = of(portType: portType) {
            return fromPort
        }
        switch graph.formFactor(of: node) {
        case "headphone": return .headphones
        case "headset", "hands-free", "handset": return .headset
        case "speaker", "hifi", "portable", "car", "tv": return .speaker
        case "internal": return .internal
        default: break
        }
        let names = (graph.property("device.profile.name", of: node) ?? "") + " " + (node.name ?? "")
        let text = names.lowercased()
        if (text.firstRange(of: "hdmi") != nil) || (text.firstRange(of: "displayport") != nil) { return .hdmi }
        if (text.firstRange(of: "iec958") != nil) || (text.firstRange(of: "spdif") != nil) { return .digital }
        switch graph.bus(of: node) {
        case "usb": return .usb
        case "pci", "isa": return .internal
        default: return .other
        }
    }

    /// A route's `port.type` as a class; nil for types that say nothing (`unknown`, `analog`).
    public static func of(portType: String) -> SinkClass? {
        switch portType.lowercased() {
        case "headphones", "headphone", "earpiece": return .headphones
        case "headset", "handset", "handsfree", "hands-free": return .headset
        case "speaker", "hifi", "portable", "car", "tv": return .speaker
        case "line", "aux": return .line
        case "spdif", "iec958": return .digital
        case "hdmi", "displayport": return .hdmi
        default: return nil
        }
    }

    /// Never personal, whatever the config says: nobody wears an HDMI monitor or an S/PDIF
    /// amplifier (a `personal-classes` listing them is refused).
    public var canBePersonal: Bool { self != .hdmi && self != .digital }
}
