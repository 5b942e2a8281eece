import AudioGraph

/// One process as `/proc/PID/stat` describes it: who started it and when. The start time
/// tells a process from a later one that got the same pid (pids are reused).
public struct ProcessRecord: Sendable, Hashable {
    public var pid: Int32
    /// `PPid`: the parent (0 for the kernel's own; a dead parent's orphans go to a reaper).
    public var parent: Int32
    /// Field 22, `starttime`: clock ticks after boot. Only compared, never converted.
    public var startTime: UInt64

    public init(pid: Int32, parent: Int32, startTime: UInt64) {
        self.pid = pid
        self.parent = parent
        self.startTime = startTime
    }

    /// Reads `/proc/PID/stat`'s text: `pid (comm) state ppid … starttime …`. The command name
    /// may hold spaces and parentheses, so the fields are counted after the *last* `)`. Nil
    /// for anything else (never a guess).
    public init?(stat text: String) {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close,
            let pid = Int32(text[..<open].trimmingWhitespace)
        else { return nil }
        // After ")": state (3), ppid (4), … starttime (22): index 0 is field 3.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 19, let parent = Int32(fields[1]), let start = UInt64(fields[19]) else { return nil }
        self.init(pid: pid, parent: parent, startTime: start)
    }
}

/// A Flatpak sandbox: the app and the instance, as `/.flatpak-info` inside it says
/// (`[Application] name=`, `[Instance] instance-id=`; flatpak-metadata(5)). PipeWire stamps
/// the same on a sandboxed client (`pipewire.access.portal.app_id`, and on newer PipeWire
/// `pipewire.access.portal.instance_id`).
public struct FlatpakInstance: Sendable, Hashable, CustomStringConvertible {
    public var app: String
    /// nil where the file (an old Flatpak) or the client (an old PipeWire) does not say.
    public var instance: String?

    public init(app: String, instance: String?) {
        self.app = app
        self.instance = instance
    }

    /// The largest `.flatpak-info` read; a real one is well under 4 KiB.
    public static let sizeLimit = 64 * 1024

    /// Reads a `.flatpak-info` (a GLib key file: `[Group]`, `key=value`, `#` comments). Nil
    /// without an application name: such a file says nothing about whose sandbox it is.
    public init?(flatpakInfo text: String) {
        var group = ""
        var app: String?
        var instance: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingWhitespace
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace
            let value = String(line[line.index(after: equals)...].trimmingWhitespace)
            switch (group, key) {
            case ("Application", "name"): app = value
            case ("Instance", "instance-id"): instance = value
            default: break
            }
        }
        guard let app, !app.isEmpty else { return nil }
        self.init(app: app, instance: instance?.isEmpty == true ? nil : instance)
    }

    public var description: String { instance.map { "\(app) instance \($0)" } ?? app }
}

/// Where processes are read: `/proc` in the daemon, a table in tests and eval.
public protocol ProcessLookup: Sendable {
    func process(_ pid: Int32) -> ProcessRecord?
    /// The Flatpak sandbox `pid` runs in, or nil (not sandboxed, gone, or not readable).
    func flatpak(of pid: Int32) -> FlatpakInstance?
}

/// A fixed process table: eval's `process` script lines, and tests.
public struct ProcessTable: ProcessLookup, Hashable {
    public var processes: [Int32: ProcessRecord]
    public var flatpaks: [Int32: FlatpakInstance]

    public init(processes: [ProcessRecord] = [], flatpaks: [Int32: FlatpakInstance] = [:]) {
        self.processes = Dictionary(processes.map { ($0.pid, $0) }, uniquingKeysWith: { _, last in last })
        self.flatpaks = flatpaks
    }

    public func process(_ pid: Int32) -> ProcessRecord? { processes[pid] }
    public func flatpak(of pid: Int32) -> FlatpakInstance? { flatpaks[pid] }
}
