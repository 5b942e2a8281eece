import AudioGraph

/// How a playback stream was found to be a media player's (docs/policy.md §7): the stream's
/// client is the player's process, a descendant of it (Chromium, Electron: the audio comes
/// from a child of the process owning the MPRIS name), or the same Flatpak app and instance.
public enum PlayerMatchKind: String, Sendable, Hashable, Codable, CaseIterable {
    case pid
    case ancestor
    case flatpak

    /// Lower is closer: the player's own process, then an ancestor, then only the sandbox.
    public var closeness: Int {
        switch self {
        case .pid: 0
        case .ancestor: 1
        case .flatpak: 2
        }
    }
}

/// Who a playback stream's client says it is, read from the graph: the pids PipeWire gives
/// (`pipewire.sec.pid`, from the socket: unforgeable) and the client itself gives
/// (`application.process.id`), and the Flatpak sandbox PipeWire stamped on it.
public struct StreamClient: Sendable, Hashable {
    /// A pid, and the client property it came from.
    public struct ProcessID: Sendable, Hashable {
        public var key: String
        public var pid: Int32

        public init(key: String, pid: Int32) {
            self.key = key
            self.pid = pid
        }
    }

    public var stream: ObjectID
    public var serial: UInt64?
    /// Each pid to try, in order.
    public var pids: [ProcessID]
    public var flatpak: FlatpakInstance?

    public init(stream: ObjectID, serial: UInt64?, pids: [ProcessID], flatpak: FlatpakInstance?) {
        self.stream = stream
        self.serial = serial
        self.pids = pids
        self.flatpak = flatpak
    }

    /// The client of `stream` in `graph`, or nil (no client known).
    ///
    /// A client of pipewire-pulse (or any other protocol server: `pipewire.sec.pid` is then the
    /// server's, not the application's) is known only by `application.process.id`, which the
    /// server copies from the application's own properties.
    public init?(of stream: Node, in graph: Graph) {
        guard let client = stream.clientID.flatMap({ graph.clients[$0] }) else { return nil }
        var pids: [ProcessID] = []
        let served = client.props["client.api"] == "pipewire-pulse" || stream.props["client.api"] == "pipewire-pulse" || client.props["pulse.server.type"] != nil
        for key in ["pipewire.sec.pid", "application.process.id"] where !(served && key == "pipewire.sec.pid") {
            if let pid = client.props[key].flatMap({ Int32($0) }), pid > 0, !pids.contains(where: { $0.pid == pid }) {
                pids.append(ProcessID(key: key, pid: pid))
            }
        }
        self.init(stream: stream.id, serial: stream.serial, pids: pids, flatpak: Self.flatpak(of: client.props))
    }
}

extension StreamClient {
    /// The Flatpak sandbox PipeWire stamped on a client: `pipewire.access.portal.app_id` (the
    /// access module and pipewire-pulse, 0.3 and 1.x, from `pw_check_flatpak`) with
    /// `pipewire.access.portal.instance_id` where set, or a security context Flatpak opened
    /// (`pipewire.sec.engine` = `org.flatpak`: `pipewire.sec.app-id`, `pipewire.sec.instance-id`).
    /// Every one of these is set by PipeWire, never by the client.
    static func flatpak(of props: Properties) -> FlatpakInstance? {
        func value(_ key: String) -> String? { props[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let app = value("pipewire.access.portal.app_id") {
            return FlatpakInstance(app: app, instance: value("pipewire.access.portal.instance_id"))
        }
        if props["pipewire.sec.engine"] == "org.flatpak", let app = value("pipewire.sec.app-id") {
            return FlatpakInstance(app: app, instance: value("pipewire.sec.instance-id"))
        }
        return nil
    }
}

/// A media player's process: the owner of its MPRIS name, and the Flatpak sandbox the owner
/// runs in. A Flatpak app's name is owned by its D-Bus proxy (xdg-dbus-proxy), which runs in
/// the app's sandbox with the app's `.flatpak-info`: matching by the sandbox matches what the
/// proxy serves, not the proxy.
public struct PlayerProcess: Sendable, Hashable {
    public var pid: Int32
    public var startTime: UInt64?
    public var flatpak: FlatpakInstance?

    public init(pid: Int32, startTime: UInt64?, flatpak: FlatpakInstance?) {
        self.pid = pid
        self.startTime = startTime
        self.flatpak = flatpak
    }
}

/// Pairs streams with players, as WirePlumber 0.5's `linking/mpris-pause` does and further:
/// - a sandboxed side (either) matches only by Flatpak: the same app, and the same instance
///   where both say one (a pid inside a sandbox is the sandbox's own, meaningless outside);
/// - otherwise by pid: the player's process is the client's (`pid`) or one of its ancestors
///   (`ancestor`), walking `PPid` at most `maxDepth` steps, and only while each parent started
///   no later than its child (a parent that started after its child is a reused pid).
public struct PlayerMatcher {
    /// Deeper than any real process tree between a player and its audio (Chromium: 1–2).
    public static let maxDepth = 32

    private let processes: any ProcessLookup
    /// Ancestor chains read so far (one decision), by pid: each pid's chain is read once.
    private var chains: [Int32: [ProcessRecord]] = [:]

    public init(processes: any ProcessLookup) {
        self.processes = processes
    }

    public mutating func match(_ client: StreamClient, _ player: PlayerProcess) -> PlayerMatchKind? {
        if client.flatpak != nil || player.flatpak != nil {
            guard let mine = client.flatpak, let theirs = player.flatpak, mine.app == theirs.app else { return nil }
            if let a = mine.instance, let b = theirs.instance, a != b { return nil }
            return .flatpak
        }
        if client.pids.contains(where: { $0.pid == player.pid }) { return .pid }
        for entry in client.pids
        where ancestors(of: entry.pid).contains(where: { $0.pid == player.pid && (player.startTime ?? $0.startTime) == $0.startTime }) {
            return .ancestor
        }
        return nil
    }

    /// The processes above `pid`, nearest first; the walk stops at the top, at a process that
    /// cannot be read, at a parent younger than its child, at a loop, or after `maxDepth`.
    mutating func ancestors(of pid: Int32) -> [ProcessRecord] {
        if let known = chains[pid] { return known }
        var chain: [ProcessRecord] = []
        var seen: Set<Int32> = [pid]
        var current = processes.process(pid)
        while let child = current, chain.count < Self.maxDepth, child.parent > 1, seen.insert(child.parent).inserted,
            let parent = processes.process(child.parent), parent.startTime <= child.startTime
        {
            chain.append(parent)
            current = parent
        }
        chains[pid] = chain
        return chain
    }
}
