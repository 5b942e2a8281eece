import AudioGraph

/// The kind of output a sink is, read from its (or its device's) properties. The class order
/// and the personal classes of the config are lists of these.
public enum SinkClass: String, Sendable, Hashable, CaseIterable, Codable {
    case headphones, headset, usb, speaker, `internal`, hdmi, other

    public static let defaultOrder: [SinkClass] = [.headphones, .headset, .usb, .speaker, .internal, .other, .hdmi]
    /// Outputs that belong to one person: when one arrives, it takes the output.
    public static let defaultPersonal: [SinkClass] = [.headphones, .headset, .usb]

    /// HDMI/DisplayPort first (ALSA marks them only in profile and node names), then the form
    /// factor, then the bus.
    public static func of(_ node: Node, in graph: Graph) -> SinkClass {
        let profile = graph.property("device.profile.name", of: node)?.lowercased() ?? ""
        let name = node.name?.lowercased() ?? ""
        if profile.contains("hdmi") || profile.contains("displayport") || name.contains("hdmi") || name.contains("displayport") {
            return .hdmi
        }
        switch graph.formFactor(of: node) {
        case "headphone": return .headphones
        case "headset", "hands-free", "handset": return .headset
        case "speaker", "hifi", "portable", "car", "tv": return .speaker
        case "internal": return .internal
        default: break
        }
        switch graph.bus(of: node) {
        case "usb": return .usb
        case "pci", "isa": return .internal
        default: return .other
        }
    }
}
