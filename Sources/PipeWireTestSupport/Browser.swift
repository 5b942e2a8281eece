import AudioGraph
import Foundation
import SystemBridge
#if canImport(Glibc)
import Glibc
#endif

/// A real browser (Debian's `chromium` or `firefox-esr`) playing a tone page into a sandbox:
/// on the sandbox's Xvfb, through its pipewire-pulse, publishing MPRIS on its session bus, with
/// a fresh profile, HOME and TMPDIR under the sandbox root. Start the sandbox with
/// `wirePlumber: true` (a session bus, and someone to link the stream) and `pulse: true`.
///
/// The browser runs in a process group of its own, which every helper process it starts shares
/// (Chromium's zygotes, renderers, GPU, network and audio services; Firefox's fork server and
/// content processes), under a reaper (`reaperScript`) that leads the group and reaps every
/// process of the tree, orphans included: `stop()` (or the sandbox's) ends the whole group and
/// returns once the reaper has exited — the whole tree gone and reaped, the group empty.
/// docs/testing-browsers.md has the facts measured with it.
public final class Browser: @unchecked Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case chromium, firefox
        public var description: String { rawValue }
        /// The Debian program started (PATH).
        public var program: String { self == .chromium ? "chromium" : "firefox-esr" }
        /// How its MPRIS bus names begin: Chromium's end in the PID of its main process
        /// (`instance12345`), Firefox's in its unique bus name (`instance_1_7` for `:1.7`).
        public var mprisNamePrefix: String { "org.mpris.MediaPlayer2.\(rawValue).instance" }
    }

    public static let mprisPath = "/org/mpris/MediaPlayer2"
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"

    public let kind: Kind
    /// The reaper: the group's leader (its PID is the group's ID), the browser's parent.
    public let process: ChildProcess
    /// The browser's main process (the reaper's child): it owns the MPRIS name.
    public let pid: Int32
    /// HOME, TMPDIR and the profile live here (under the sandbox root).
    public let directory: URL
    /// The tone page it opened.
    public let page: URL
    private let sandbox: PipeWireSandbox
    private let bus: DBusConnection
    private let lock = NSLock()
    private var foundMPRISName: String?

    public var processGroup: ProcessGroup { ProcessGroup(id: process.pid) }

    private init(kind: Kind, process: ChildProcess, pid: Int32, directory: URL, page: URL, sandbox: PipeWireSandbox, bus: DBusConnection) {
        self.kind = kind
        self.process = process
        self.pid = pid
        self.directory = directory
        self.page = page
        self.sandbox = sandbox
        self.bus = bus
    }

    deinit { bus.close() }

    /// Starts the browser on the tone page (TonePage), after the sandbox's Xvfb
    /// (`startDisplay()`, started here if it is not yet). Returns at once: wait with
    /// `waitForStream` and `waitForMPRISName`.
    public static func start(_ kind: Kind, in sandbox: PipeWireSandbox) async throws -> Browser {
        guard sandbox.environment["PULSE_SERVER"] != nil else {
            throw FixtureError("a browser plays through pipewire-pulse: start the sandbox with pulse: true")
        }
        guard let address = sandbox.environment["DBUS_SESSION_BUS_ADDRESS"], sandbox.sessionBusProcess != nil else {
            throw FixtureError("a browser publishes MPRIS on the session bus: start the sandbox with wirePlumber: true or sessionBus: true")
        }
        try sandbox.startDisplay()
        let www = sandbox.root.appendingPathComponent("www")
        let written = www.appendingPathComponent("index.html")
        let page = FileManager.default.fileExists(atPath: written.path) ? written : try TonePage.write(into: www)
        let files = FileManager.default
        var number = 1
        while files.fileExists(atPath: sandbox.root.appendingPathComponent("browsers/\(kind)-\(number)").path) { number += 1 }
        let directory = sandbox.root.appendingPathComponent("browsers/\(kind)-\(number)")
        let home = directory.appendingPathComponent("home")
        let temporary = directory.appendingPathComponent("tmp")
        let profile = directory.appendingPathComponent("profile")
        for made in [home, temporary, profile] { try files.createDirectory(at: made, withIntermediateDirectories: true) }
        let environment = [
            "HOME": home.path,
            "TMPDIR": temporary.path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            // No accessibility bus and no dconf: the sandbox's bus starts nothing on demand
            // (PrivateBus), and these keep the toolkits from asking.
            "NO_AT_BRIDGE": "1",
            "GNOME_ACCESSIBILITY": "0",
            "GSETTINGS_BACKEND": "memory",
            "MOZ_CRASHREPORTER_DISABLE": "1",
        ]
        let arguments: [String]
        switch kind {
        case .chromium:
            arguments = chromiumArguments(profile: profile, page: page)
        case .firefox:
            try firefoxPreferences.write(to: profile.appendingPathComponent("user.js"), atomically: true, encoding: .utf8)
            arguments = ["firefox-esr", "--no-remote", "--profile", profile.path, page.absoluteString]
        }
        let bus = try DBusConnection(.address(address))
        let (readEnd, writeEnd) = ChildProcess.makePipe()
        defer { close(readEnd) }
        let reaper: ChildProcess
        do {
            reaper = try sandbox.spawn(
                kind.rawValue, ["/usr/bin/python3", "-c", reaperScript] + arguments, extraEnvironment: environment, stdoutFD: writeEnd,
                newProcessGroup: true)
        } catch {
            close(writeEnd)
            bus.close()
            throw error
        }
        close(writeEnd)
        guard let line = Readiness.readLine(from: readEnd, timeout: .seconds(30)), let pid = Int32(line) else {
            reaper.stop()
            bus.close()
            throw FixtureError("the reaper did not start \(kind.program) (exit status \(reaper.exitStatus.map(String.init) ?? "running"))\n\(reaper.logTail())")
        }
        return Browser(kind: kind, process: reaper, pid: pid, directory: directory, page: page, sandbox: sandbox, bus: bus)
    }

    /// Runs `argv[1:]` as the child subreaper of its whole tree (PR_SET_CHILD_SUBREAPER):
    /// a process whose parent dies is handed to this one, not to init, so every process of
    /// the tree is reaped here, at once. It prints the child's PID (to its stdout, a pipe to
    /// the fixture; the child's stdout is the log), ignores SIGTERM, SIGINT and SIGHUP (a
    /// signal to the group is for the browser; the reaper stays to reap), and exits once
    /// nothing is left to reap, with the browser's exit status: then the whole tree is gone.
    /// Python (/usr/bin/python3, which the tests need anyway): prctl from ctypes, no build.
    static let reaperScript = """
        import ctypes, os, signal, sys
        if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
            sys.exit("reaper: prctl(PR_SET_CHILD_SUBREAPER): " + os.strerror(ctypes.get_errno()))
        passed_on = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        for number in passed_on:
            signal.signal(number, signal.SIG_IGN)
        child = os.fork()
        if child == 0:
            for number in passed_on + (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(number, signal.SIG_DFL)
            os.dup2(2, 1)
            try:
                os.execvp(sys.argv[1], sys.argv[1:])
            except OSError as error:
                os.write(2, ("reaper: cannot run %s: %s\\n" % (sys.argv[1], error)).encode())
            os._exit(127)
        os.write(1, b"%d\\n" % child)
        os.dup2(2, 1)
        status = 1
        while True:
            try:
                pid, raw = os.wait()
            except ChildProcessError:
                break
            if pid == child:
                status = os.waitstatus_to_exitcode(raw)
        sys.exit(status if status >= 0 else 128 - status)
        """

    /// Chromium as root needs `--no-sandbox`; autoplay without a gesture; a fresh profile with
    /// no first-run UI; no GPU (Xvfb has none); and nothing that reaches for the network (there
    /// is none: component updates, background fetches, sync, extensions). Not `--headless`
    /// (it would publish MPRIS too, measured; but a desktop browser is what users run), and
    /// not `--mute-audio`: the audio is the point.
    static func chromiumArguments(profile: URL, page: URL) -> [String] {
        [
            "chromium", "--no-sandbox", "--user-data-dir=\(profile.path)", "--no-first-run", "--no-default-browser-check",
            "--autoplay-policy=no-user-gesture-required", "--disable-gpu", "--password-store=basic",
            "--disable-background-networking", "--disable-component-update", "--disable-extensions", "--disable-sync",
            "--disable-default-apps", "--disable-breakpad", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
            "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
            "--disable-session-crashed-bubble", "--noerrdialogs", "--window-size=800,600",
            page.absoluteString,
        ]
    }

    /// Firefox's user.js: autoplay allowed, no first-run or default-browser pages, no
    /// telemetry, updates or other traffic to the network (there is none), one content process.
    static let firefoxPreferences = """
        user_pref("media.autoplay.default", 0);
        user_pref("media.autoplay.blocking_policy", 0);
        user_pref("media.hardwaremediakeys.enabled", true);
        user_pref("browser.shell.checkDefaultBrowser", false);
        user_pref("browser.startup.homepage_override.mstone", "ignore");
        user_pref("startup.homepage_welcome_url", "");
        user_pref("startup.homepage_welcome_url.additional", "");
        user_pref("browser.aboutwelcome.enabled", false);
        user_pref("browser.sessionstore.resume_from_crash", false);
        user_pref("toolkit.startup.max_resumed_crashes", -1);
        user_pref("browser.tabs.warnOnClose", false);
        user_pref("datareporting.policy.dataSubmissionEnabled", false);
        user_pref("datareporting.healthreport.uploadEnabled", false);
        user_pref("toolkit.telemetry.enabled", false);
        user_pref("toolkit.telemetry.unified", false);
        user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
        user_pref("app.normandy.enabled", false);
        user_pref("app.update.auto", false);
        user_pref("extensions.update.enabled", false);
        user_pref("extensions.getAddons.cache.enabled", false);
        user_pref("extensions.pocket.enabled", false);
        user_pref("browser.search.update", false);
        user_pref("browser.safebrowsing.malware.enabled", false);
        user_pref("browser.safebrowsing.phishing.enabled", false);
        user_pref("browser.safebrowsing.downloads.enabled", false);
        user_pref("browser.safebrowsing.blockedURIs.enabled", false);
        user_pref("network.captive-portal-service.enabled", false);
        user_pref("network.connectivity-service.enabled", false);
        user_pref("network.dns.disablePrefetch", true);
        user_pref("network.prefetch-next", false);
        user_pref("media.gmp-manager.updateEnabled", false);
        user_pref("browser.newtabpage.enabled", false);
        user_pref("dom.ipc.processCount", 1);
        user_pref("dom.ipc.processPrelaunch.enabled", false);

        """

    // MARK: The playback stream

    /// The process whose `application.process.id` a stream carries (on the node, as
    /// pipewire-pulse sets it, else on its client).
    public static func processID(of stream: Node, in graph: Graph) -> Int32? {
        (stream.props["application.process.id"] ?? graph.clients[stream.clientID ?? 0]?.props["application.process.id"]).flatMap { Int32($0) }
    }

    /// The browser's playback streams in `graph`: those of a process in its group.
    public func streams(in graph: Graph) -> [Node] {
        let group = process.pid
        return graph.playbackStreams.filter { stream in
            guard let pid = Self.processID(of: stream, in: graph) else { return false }
            return ProcessTable.entry(pid)?.group == group
        }
    }

    /// The browser's stream linked to `sink` (nil: the default sink, effective or else
    /// configured), if there is one in `graph`.
    public func stream(in graph: Graph, linkedTo sink: String? = nil) -> Node? {
        guard let target = sink ?? graph.effectiveDefaultSinkName ?? graph.configuredDefaultSinkName else { return nil }
        return streams(in: graph).first { stream in
            graph.linkedTargets(of: stream.id).contains { $0.name == target }
        }
    }

    /// Waits for the browser's playback stream linked to `sink` (nil: the default sink) and
    /// returns it. Browsers start slowly on a loaded machine: the deadline is generous.
    @discardableResult
    public func waitForStream(linkedTo sink: String? = nil, timeout: Duration = .seconds(90)) async throws -> Node {
        let graph: Graph
        do {
            graph = try await sandbox.observer.waitUntil("\(kind)'s playback stream linked to \(sink ?? "the default sink")", timeout: timeout) { [self] graph in
                stream(in: graph, linkedTo: sink) != nil
            }
        } catch {
            throw FixtureError("\(error)\n\(kind) (pid \(pid), \(process.exitStatus.map { "exited \($0)" } ?? "running")):\n\(process.logTail())")
        }
        return stream(in: graph, linkedTo: sink)!
    }

    // MARK: MPRIS

    /// Waits for the MPRIS name (`org.mpris.MediaPlayer2.…`) owned by a process of the
    /// browser's group on the sandbox's session bus, and for its player object to answer;
    /// returns the name.
    public func waitForMPRISName(timeout: Duration = .seconds(90)) async throws -> String {
        if let name = lock.withLock({ foundMPRISName }) { return name }
        let (taken, continuation) = AsyncStream.makeStream(of: String.self)
        defer { continuation.finish() }
        // Listened for first, then the names already there are looked at: none slips by.
        try await bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0namespace='org.mpris.MediaPlayer2'"
        ) { signal in
            let arguments = signal.arguments
            if arguments.count == 3, let name = arguments[0].string, arguments[2].string?.isEmpty == false { continuation.yield(name) }
        }
        let deadline = ContinuousClock.now + timeout
        let name = try await withDeadline(timeout, "\(kind) (pid \(pid)) took no MPRIS name") { [self] in
            for name in try await busCall("ListNames").first?.stringList ?? [] where name.hasPrefix("org.mpris.MediaPlayer2.") {
                if try await isOurs(name) { return name }
            }
            for await name in taken {
                if try await isOurs(name) { return name }
            }
            throw FixtureError("no more names")
        }
        // Firefox exports its MPRIS object when it has the name (GDBus's name-acquired
        // callback), not before: in between a call fails with UnknownMethod ("Object does not
        // exist"), which the bus announces no end of. Asked again after a short backoff.
        while true {
            do {
                _ = try await status(of: name)
                break
            } catch DBusError.remote(let error, let message) where error.hasPrefix("org.freedesktop.DBus.Error.Unknown") {
                guard ContinuousClock.now < deadline else { throw FixtureError("\(name) exports no MPRIS player: \(error): \(message)") }
                try await Task.sleep(for: .milliseconds(20))  // retry backoff until the object is exported
            }
        }
        lock.withLock { foundMPRISName = name }
        return name
    }

    /// The PID of the process that owns the browser's MPRIS name.
    public func mprisOwnerPID() async throws -> Int32 {
        let name = try await waitForMPRISName()
        guard let pid = try await ownerPID(of: name) else { throw FixtureError("\(name) has no owner") }
        return pid
    }

    /// `PlaybackStatus` of the browser's MPRIS player: `Playing`, `Paused` or `Stopped`.
    public func playbackStatus() async throws -> String {
        try await status(of: try await waitForMPRISName())
    }

    private func status(of name: String) async throws -> String {
        let reply = try await bus.call(
            destination: name, path: Self.mprisPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(Self.playerInterface), .string("PlaybackStatus")])
        guard let status = reply.first?.unwrapped.string else { throw FixtureError("\(name) answered PlaybackStatus with \(reply)") }
        return status
    }

    /// Calls MPRIS `Pause` (or `Play`, `PlayPause`, `Stop`) on the browser's player.
    public func mpris(_ method: String) async throws {
        let name = try await waitForMPRISName()
        _ = try await bus.call(destination: name, path: Self.mprisPath, interface: Self.playerInterface, member: method)
    }

    public func pause() async throws { try await mpris("Pause") }
    public func play() async throws { try await mpris("Play") }

    /// Waits until the player's `PlaybackStatus` is `status`: read now, then again after each
    /// PropertiesChanged of its MPRIS object (listened for before the first read).
    public func waitForPlaybackStatus(_ status: String, timeout: Duration = .seconds(30)) async throws {
        let name = try await waitForMPRISName()
        guard let owner = try await busCall("GetNameOwner", name).first?.string else { throw FixtureError("\(name) has no owner") }
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self)
        defer { continuation.finish() }
        try await bus.addMatch(
            "type='signal',sender='\(owner)',path='\(Self.mprisPath)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
        ) { _ in continuation.yield() }
        try await withDeadline(timeout, "\(name) did not say PlaybackStatus \(status)") { [self] in
            if try await playbackStatus() == status { return }
            for await _ in changes {
                if try await playbackStatus() == status { return }
            }
            throw FixtureError("no more changes")
        }
    }

    private func isOurs(_ name: String) async throws -> Bool {
        guard let pid = try await ownerPID(of: name) else { return false }
        return ProcessTable.entry(pid)?.group == process.pid
    }

    private func ownerPID(of name: String) async throws -> Int32? {
        guard let pid = try? await busCall("GetConnectionUnixProcessID", name).first?.integer else { return nil }
        return Int32(pid)
    }

    private func busCall(_ member: String, _ argument: String? = nil) async throws -> [DBusValue] {
        try await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            argument.map { [DBusValue.string($0)] } ?? [])
    }

    // MARK: Stopping

    /// Stops the whole process group (SIGTERM, SIGKILL after `grace`) and returns once no
    /// member lives (the reaper exits last, after reaping the rest); closes the fixture's bus
    /// connection.
    public func stop(grace: Duration = .seconds(10)) {
        process.stop(grace: grace)
        bus.close()
    }

    /// The processes of the browser's group that are still alive (none after `stop()`).
    public var livingProcesses: [ProcessEntry] { processGroup.livingMembers() }
}

/// Runs `body` until it returns, or fails with `what` after `timeout` (a deadline, not a sleep).
func withDeadline<Result: Sendable>(
    _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)  // the deadline, not a synchronisation
            throw FixtureError("\(what) within \(timeout)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
