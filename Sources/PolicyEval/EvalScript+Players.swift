import RoutingPolicy
import AudioGraph

/// `add-player`: a media player on the session bus, so `earshot eval` can say what a departing
/// headset would pause and what it would hold silent (docs/policy.md §7).
extension EvalScript {
    static let addPlayerUsage =
        "add-player takes {\"name\": \"org.mpris.MediaPlayer2.<player>\", \"pid\": <its process>} and optionally \"descendants\" (pids it started: Chromium's audio service), \"flatpak\": {\"app\": …, \"instance\": …} and \"playing\": false"
    /// The most descendants one player may list.
    static let descendantLimit = 1024

    static func player(_ body: JSONValue, fail: (String) -> EvalScriptError) throws(EvalScriptError) -> PlaybackPreview.Player {
        guard case .object(let fields) = body else { throw fail(addPlayerUsage) }
        if let unknown = fields.keys.sorted().first(where: { !["name", "pid", "descendants", "flatpak", "playing"].contains($0) }) {
            throw fail("add-player: unknown field \"\(unknown)\"; \(addPlayerUsage)")
        }
        guard case .string(let name)? = fields["name"], name.hasPrefix("org.mpris.MediaPlayer2."), name.count > "org.mpris.MediaPlayer2.".count else {
            throw fail("add-player: \"name\" must be an MPRIS bus name (org.mpris.MediaPlayer2.<player>); \(addPlayerUsage)")
        }
        func pid(_ value: JSONValue?, _ what: String) throws(EvalScriptError) -> Int32 {
            guard case .integer(let number)? = value, number > 1, let pid = Int32(exactly: number) else {
                throw fail("add-player: \(what) must be a process id, a whole number from 2 to \(Int32.max)")
            }
            return pid
        }
        var player = PlaybackPreview.Player(name: name, pid: try pid(fields["pid"], "\"pid\""))
        switch fields["descendants"] {
        case nil: break
        case .array(let items)? where items.count <= descendantLimit:
            for (index, item) in items.enumerated() { player.descendants.append(try pid(item, "\"descendants\"[\(index)]")) }
        default: throw fail("add-player: \"descendants\" must be a list of at most \(descendantLimit) process ids")
        }
        switch fields["flatpak"] {
        case nil: break
        case .object(let sandbox)?:
            guard case .string(let app)? = sandbox["app"], !app.isEmpty, sandbox.keys.allSatisfy({ $0 == "app" || $0 == "instance" }) else {
                throw fail("add-player: \"flatpak\" takes {\"app\": \"<app id>\"} and optionally \"instance\": \"<instance id>\"")
            }
            var instance: String?
            switch sandbox["instance"] {
            case nil: break
            case .string(let text)?: instance = text
            default: throw fail("add-player: \"flatpak\".\"instance\" must be a string")
            }
            player.flatpak = FlatpakInstance(app: app, instance: instance)
        default: throw fail("add-player: \"flatpak\" must be an object")
        }
        switch fields["playing"] {
        case nil: break
        case .bool(let flag)?: player.playing = flag
        default: throw fail("add-player: \"playing\" must be true or false")
        }
        return player
    }
}
