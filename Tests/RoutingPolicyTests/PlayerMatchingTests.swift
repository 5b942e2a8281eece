import AudioGraph
import RoutingPolicy
import Testing

/// Issue 38: a stream is a player's when its client is the player's process, a descendant of
/// it (Chromium, Electron), or the same Flatpak app and instance.
struct PlayerMatchingTests {
    // MARK: /proc/PID/stat

    @Test("stat: ppid and starttime are counted after the last ')' (a command name may hold spaces and parentheses)")
    func statParsing() throws {
        // A real line of this machine's /proc/self/stat, with its command name replaced.
        let line = "17566 (Chrome_Child) (x) S 17380 17380 17380 0 -1 4194560 2318 0 0 0 3 1 0 0 20 0 7 0 91234567 1234567 890 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 1 0 0 0 0 0"
        let record = try #require(ProcessRecord(stat: line))
        #expect(record == ProcessRecord(pid: 17566, parent: 17380, startTime: 91_234_567))
        #expect(ProcessRecord(stat: "") == nil)
        #expect(ProcessRecord(stat: "12 (short) S 1") == nil, "too few fields: refused, never guessed")
        #expect(ProcessRecord(stat: "x (a) S 1 " + String(repeating: "0 ", count: 30)) == nil)
    }

    @Test("stat of this very process reads, and its parent is the one the kernel says")
    func ownStat() throws {
        let text = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
        let record = try #require(ProcessRecord(stat: text))
        #expect(record.pid > 0)
        #expect(record.parent == getppid())
    }

    // MARK: .flatpak-info

    /// The shape flatpak-metadata(5) gives `/.flatpak-info` in a sandbox (Flatpak 1.14).
    static let flatpakInfo = """
        [Application]
        name=org.mozilla.firefox
        runtime=runtime/org.freedesktop.Platform/x86_64/23.08

        [Instance]
        instance-id=1804133477
        instance-path=/home/user/.var/app/org.mozilla.firefox
        app-path=/var/lib/flatpak/app/org.mozilla.firefox/x86_64/stable/active/files
        branch=stable
        arch=x86_64
        flatpak-version=1.14.4
        session-bus-proxy=true

        [Context]
        shared=network;ipc;
        sockets=x11;wayland;pulseaudio;
        # a comment
        """

    @Test(".flatpak-info: the app and the instance; a file without an app says nothing")
    func flatpakInfoParsing() {
        #expect(FlatpakInstance(flatpakInfo: Self.flatpakInfo) == FlatpakInstance(app: "org.mozilla.firefox", instance: "1804133477"))
        #expect(FlatpakInstance(flatpakInfo: "[Application]\nname=org.example.Old\n") == FlatpakInstance(app: "org.example.Old", instance: nil))
        #expect(FlatpakInstance(flatpakInfo: "[Context]\nname=org.example.NotTheApp\n") == nil, "a name in another group is not the app")
        #expect(FlatpakInstance(flatpakInfo: "") == nil)
        #expect(FlatpakInstance(flatpakInfo: String(repeating: "garbage\u{0}=\n", count: 1000)) == nil)
    }

    // MARK: Clients as PipeWire describes them

    static func graph(client props: Properties) -> (Graph, Node) {
        var graph = Graph()
        graph.apply(.client(Client(id: 70, props: props)))
        let stream = Node(id: 80, state: .running, props: ["media.class": "Stream/Output/Audio", "client.id": "70", "object.serial": "880"])
        graph.apply(.node(stream))
        return (graph, stream)
    }

    @Test("a native client: pipewire.sec.pid (the socket's) first, then application.process.id; the same pid once")
    func nativeClient() throws {
        let (graph, stream) = Self.graph(client: ["pipewire.sec.pid": "4100", "application.process.id": "4100", "application.name": "mpv"])
        let client = try #require(StreamClient(of: stream, in: graph))
        #expect(client.pids == [.init(key: "pipewire.sec.pid", pid: 4100)])
        #expect(client.flatpak == nil)
        #expect(client.serial == 880)
    }

    @Test("a pipewire-pulse client: its pipewire.sec.pid is the server's, so only application.process.id counts")
    func pulseClient() throws {
        let (graph, stream) = Self.graph(client: [
            "pipewire.sec.pid": "900", "application.process.id": "17566", "client.api": "pipewire-pulse", "application.name": "Chromium",
        ])
        let client = try #require(StreamClient(of: stream, in: graph))
        #expect(client.pids == [.init(key: "application.process.id", pid: 17566)])
        // As measured (docs/testing-browsers.md): the stream node says client.api, whatever its client does.
        var (served, node) = Self.graph(client: ["pipewire.sec.pid": "900", "application.process.id": "17380"])
        node.props["client.api"] = "pipewire-pulse"
        served.apply(.node(node))
        #expect(try #require(StreamClient(of: node, in: served)).pids == [.init(key: "application.process.id", pid: 17380)])
    }

    /// A Flatpak client as PipeWire stamps it (pw_check_flatpak: the access module and
    /// pipewire-pulse, 0.3.65 and 1.4.2 alike): the pid inside is the sandbox's own ("2").
    @Test("a Flatpak client: the portal app id (and the instance where PipeWire sets it), or a Flatpak security context")
    func flatpakClient() throws {
        let (graph, stream) = Self.graph(client: [
            "pipewire.access": "flatpak", "pipewire.access.portal.app_id": "com.spotify.Client", "application.process.id": "2",
            "pipewire.sec.pid": "7731", "pipewire.sec.flatpak": "true", "application.process.binary": "spotify",
        ])
        #expect(try #require(StreamClient(of: stream, in: graph)).flatpak == FlatpakInstance(app: "com.spotify.Client", instance: nil))
        let (newer, newerStream) = Self.graph(client: [
            "pipewire.access.portal.app_id": "org.mozilla.firefox", "pipewire.access.portal.instance_id": "1804133477",
        ])
        #expect(try #require(StreamClient(of: newerStream, in: newer)).flatpak == FlatpakInstance(app: "org.mozilla.firefox", instance: "1804133477"))
        let (context, contextStream) = Self.graph(client: [
            "pipewire.sec.engine": "org.flatpak", "pipewire.sec.app-id": "org.gnome.Music", "pipewire.sec.instance-id": "42",
        ])
        #expect(try #require(StreamClient(of: contextStream, in: context)).flatpak == FlatpakInstance(app: "org.gnome.Music", instance: "42"))
        let (other, otherStream) = Self.graph(client: ["pipewire.sec.engine": "org.example.other", "pipewire.sec.app-id": "x"])
        #expect(try #require(StreamClient(of: otherStream, in: other)).flatpak == nil, "only Flatpak's engine names a Flatpak app")
    }

    // MARK: Matching

    /// Chromium as seen (issue 38): the stream's pid 17566 is the audio service, a child of
    /// 17380, the browser that owns org.mpris.MediaPlayer2.chromium.instanceN; 17380's parent
    /// is the session (1500).
    static let browserTree = ProcessTable(processes: [
        ProcessRecord(pid: 1500, parent: 1, startTime: 100),
        ProcessRecord(pid: 17380, parent: 1500, startTime: 5000),
        ProcessRecord(pid: 17400, parent: 17380, startTime: 5010),
        ProcessRecord(pid: 17566, parent: 17400, startTime: 5020),
    ])

    static func client(_ pids: Int32..., flatpak: FlatpakInstance? = nil) -> StreamClient {
        StreamClient(stream: 80, serial: 880, pids: pids.map { .init(key: "application.process.id", pid: $0) }, flatpak: flatpak)
    }

    @Test("pid: the player's own process; ancestor: a parent or grandparent of the stream's")
    func pidAndAncestor() {
        var matcher = PlayerMatcher(processes: Self.browserTree)
        #expect(matcher.match(Self.client(17380), PlayerProcess(pid: 17380, startTime: 5000, flatpak: nil)) == .pid)
        #expect(matcher.match(Self.client(17566), PlayerProcess(pid: 17380, startTime: 5000, flatpak: nil)) == .ancestor)
        #expect(matcher.match(Self.client(17566), PlayerProcess(pid: 17400, startTime: 5010, flatpak: nil)) == .ancestor)
        // A child is not its parent's player; a sibling's player is not; nor is the init process.
        #expect(matcher.match(Self.client(17380), PlayerProcess(pid: 17566, startTime: 5020, flatpak: nil)) == nil)
        #expect(matcher.match(Self.client(17566), PlayerProcess(pid: 9999, startTime: 1, flatpak: nil)) == nil)
        #expect(matcher.match(Self.client(17566), PlayerProcess(pid: 1, startTime: 0, flatpak: nil)) == nil)
    }

    @Test("a pid reused by another program: the player's start time must be the ancestor's")
    func pidReuse() {
        var matcher = PlayerMatcher(processes: Self.browserTree)
        // 17380 as the bus knows it started at 7777: not the browser above the stream.
        #expect(matcher.match(Self.client(17566), PlayerProcess(pid: 17380, startTime: 7777, flatpak: nil)) == nil)
        // A "parent" that started after its child is a reused pid: the walk stops there.
        let reused = ProcessTable(processes: [
            ProcessRecord(pid: 300, parent: 200, startTime: 50), ProcessRecord(pid: 200, parent: 100, startTime: 90),
            ProcessRecord(pid: 100, parent: 1, startTime: 10),
        ])
        var walker = PlayerMatcher(processes: reused)
        #expect(walker.match(Self.client(300), PlayerProcess(pid: 100, startTime: 10, flatpak: nil)) == nil)
    }

    @Test("the walk is bounded: a loop ends, and a chain deeper than maxDepth stops there")
    func boundedWalk() {
        let loop = ProcessTable(processes: [ProcessRecord(pid: 10, parent: 11, startTime: 5), ProcessRecord(pid: 11, parent: 10, startTime: 5)])
        var matcher = PlayerMatcher(processes: loop)
        #expect(matcher.match(Self.client(10), PlayerProcess(pid: 12, startTime: nil, flatpak: nil)) == nil)
        let depth = Int32(PlayerMatcher.maxDepth + 10)
        let chain = ProcessTable(processes: (2...depth + 2).map { ProcessRecord(pid: $0, parent: $0 == 2 ? 1 : $0 - 1, startTime: UInt64($0)) })
        var deep = PlayerMatcher(processes: chain)
        #expect(deep.match(Self.client(depth + 2), PlayerProcess(pid: depth + 2 - Int32(PlayerMatcher.maxDepth), startTime: nil, flatpak: nil)) == .ancestor)
        #expect(deep.match(Self.client(depth + 2), PlayerProcess(pid: 3, startTime: nil, flatpak: nil)) == nil)
    }

    @Test("Flatpak: the same app (and instance where both say one); a sandboxed side never matches by pid")
    func flatpak() {
        var matcher = PlayerMatcher(processes: ProcessTable())
        let firefox = FlatpakInstance(app: "org.mozilla.firefox", instance: "1804133477")
        // The player's name is owned by the app's D-Bus proxy: another pid, the same sandbox.
        #expect(matcher.match(Self.client(2, flatpak: firefox), PlayerProcess(pid: 6100, startTime: nil, flatpak: firefox)) == .flatpak)
        #expect(
            matcher.match(Self.client(2, flatpak: FlatpakInstance(app: "org.mozilla.firefox", instance: nil)), PlayerProcess(pid: 6100, startTime: nil, flatpak: firefox))
                == .flatpak, "an older PipeWire says no instance: the app decides")
        #expect(
            matcher.match(Self.client(2, flatpak: FlatpakInstance(app: "org.mozilla.firefox", instance: "99")), PlayerProcess(pid: 6100, startTime: nil, flatpak: firefox))
                == nil, "another instance of the same app")
        #expect(matcher.match(Self.client(2, flatpak: firefox), PlayerProcess(pid: 2, startTime: nil, flatpak: nil)) == nil, "pid 2 inside is not pid 2 outside")
        #expect(matcher.match(Self.client(6100), PlayerProcess(pid: 6100, startTime: nil, flatpak: firefox)) == nil)
    }
}

#if canImport(Glibc)
import Glibc
#endif
