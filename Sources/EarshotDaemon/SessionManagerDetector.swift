import AudioGraph

/// A session manager running on the graph, as its client describes itself.
public struct SessionManager: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    /// `application.version` of its client. WirePlumber publishes it from 0.5 on; 0.4 does
    /// not, so a WirePlumber without one is 0.4.
    public var version: String?

    public init(name: String, version: String?) {
        self.name = name
        self.version = version
    }

    public var description: String { version.map { "\(name) \($0)" } ?? name }

    /// WirePlumber 0.4 moves a stream pinned with `target.object` when the default changes
    /// unless the pin is also in the `default` metadata; 0.5 honours the stream's own pin, and
    /// reads that metadata key as an `object.serial` (a name written there erases the target it
    /// stored for the application).
    /// Whether it links a stream the moment another client's links of it go. WirePlumber 0.5
    /// does (measured); 0.4 does not notice, and never links a stream someone else linked.
    /// Unknown session managers are assumed not to.
    public var relinksFreedStreams: Bool {
        guard name == "WirePlumber", let version else { return false }
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard let major = parts.first else { return false }
        return major > 0 || (parts.count > 1 && parts[1] >= 5)
    }

    public var movesPinnedStreams: Bool {
        guard name == "WirePlumber" else { return false }
        guard let version else { return true }
        return version.hasPrefix("0.4.") || version == "0.4"
    }
}

/// Which session manager, if any, runs on the graph: it decides how decisions are applied.
public enum SessionManagerDetector {
    /// The session manager, from its client's properties, or nil when none runs.
    public static func detect(in graph: Graph) -> SessionManager? {
        for client in graph.clients.values.sorted(by: { $0.id < $1.id }) {
            let props = client.props
            let version = props["application.version"]
            if props["wireplumber.daemon"] == "true" { return SessionManager(name: "WirePlumber", version: version) }
            switch props["application.process.binary"] {
            case "wireplumber": return SessionManager(name: "WirePlumber", version: version)
            case "pipewire-media-session": return SessionManager(name: "pipewire-media-session", version: version)
            default: continue
            }
        }
        return nil
    }
}
