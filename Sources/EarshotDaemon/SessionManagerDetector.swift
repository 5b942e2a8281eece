import AudioGraph

/// Which session manager, if any, runs on the graph: it decides how decisions are applied.
public enum SessionManagerDetector {
    /// The session manager's name, from its client's properties, or nil when none runs.
    public static func detect(in graph: Graph) -> String? {
        for client in graph.clients.values.sorted(by: { $0.id < $1.id }) {
            let props = client.props
            if props["wireplumber.daemon"] == "true" { return "WirePlumber" }
            switch props["application.process.binary"] {
            case "wireplumber": return "WirePlumber"
            case "pipewire-media-session": return "pipewire-media-session"
            default: continue
            }
        }
        return nil
    }
}
