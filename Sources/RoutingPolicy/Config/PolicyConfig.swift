import AudioGraph

/// One property condition of a rule or accessory descriptor: the property (looked up on the
/// node, then its device) matches the pattern (a glob, `~regex`, `!` negation, or absent).
public struct PropertyMatch: Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var pattern: ValuePattern
    public init(key: String, pattern: ValuePattern) {
        self.key = key
        self.pattern = pattern
    }
    public init(key: String, glob: Glob) {
        self.init(key: key, pattern: .glob(glob))
    }
    public var description: String { "\(key) = \(pattern.toml)" }

    func holds(for node: Node, in graph: Graph) -> Bool {
        pattern.holds(graph.property(key, of: node))
    }
}

/// A `[[rule]]`: nodes matching every condition of any one of its match tables get a priority,
/// or are ignored.
public struct NodeRule: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case priority(Int)
        case ignore
    }
    /// `match = { … }` is one table; `match = [{ … }, { … }]` several: the rule applies when
    /// any of them matches (each: all its conditions).
    public var alternatives: [[PropertyMatch]]
    public var action: Action
    public var location: SourceLocation?

    public init(matches: [PropertyMatch], action: Action, location: SourceLocation? = nil) {
        self.init(anyOf: [matches], action: action, location: location)
    }

    public init(anyOf alternatives: [[PropertyMatch]], action: Action, location: SourceLocation? = nil) {
        self.alternatives = alternatives
        self.action = action
        self.location = location
    }

    /// The conditions as explanations show them: `a = "x", b = "y"`, alternatives joined by ` or `.
    public var matchDescription: String {
        alternatives.map { $0.map(\.description).joined(separator: ", ") }.joined(separator: " or ")
    }

    func holds(for node: Node, in graph: Graph) -> Bool {
        alternatives.contains { $0.allSatisfy { $0.holds(for: node, in: graph) } }
    }
}

/// An `[[accessory]]`: discovery descriptors for accessories without (or with a fixed) reporter.
public struct StaticAccessory: Sendable, Hashable {
    public var address: BluetoothAddress?
    public var name: Glob?
    public var vendorID: String?
    public var productID: String?
    public var bus: String?
    public var formFactor: String?
    public var properties: [PropertyMatch] = []
    /// When set, matching sinks are this accessory even without a reporter.
    public var capabilities: AccessoryCapabilities?
    /// When set, only this reporter may register the accessory.
    public var reporter: String?
    public var location: SourceLocation?

    public init() {}

    /// True when every descriptor given matches the sink.
    func matches(_ node: Node, in graph: Graph) -> Bool {
        if let address, graph.bluetoothAddress(of: node).flatMap(BluetoothAddress.init) != address { return false }
        if let name, !(node.name.map(name.matches) ?? false) { return false }
        if let vendorID, graph.property("device.vendor.id", of: node) != vendorID { return false }
        if let productID, graph.property("device.product.id", of: node) != productID { return false }
        if let bus, graph.bus(of: node) != bus { return false }
        if let formFactor, graph.formFactor(of: node) != formFactor { return false }
        return properties.allSatisfy { $0.holds(for: node, in: graph) }
    }

    /// True when a registration of `identity` is this accessory (for the reporter restriction).
    func describes(_ identity: AccessoryIdentity) -> Bool {
        switch identity {
        case .address(let other): address == other
        case .nodeName(let nodeName): name?.matches(nodeName) ?? false
        }
    }
}

/// MPRIS pause/resume (docs/policy.md §7: a player pauses when headphones go away).
public struct PlaybackConfig: Sendable, Hashable {
    /// Pause MPRIS players when the worn accessory they play on comes off or its sink goes.
    public var pauseWhenRemoved = true
    /// Resume the players Earshot paused when it goes back on.
    public var resumeWhenWorn = true
    /// How long after pausing a return still resumes; later, the paused players are forgotten.
    public var resumeWindow: Milliseconds = 15_000
    /// Pause them too when the worn accessory starts playing for another host.
    public var pauseWhenOtherHost = true
    /// What to do with a stream no pause stopped.
    public var holdUnpausable: HoldUnpausable = .mute
    public init() {}
}

/// `[playback] hold-unpausable`: a stream that played on the departing headset and that no
/// pause stopped (no MPRIS player matched, or it did not report Paused in time).
public enum HoldUnpausable: String, Sendable, Hashable, CaseIterable, Codable {
    /// Muted before its audio reaches the new sink; unmuted when the headset returns.
    case mute
    /// Left playing (before 0.4).
    case leave
}

/// When a pair of earbuds counts as in the ear (docs/drivers.md).
public enum WearRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// While at least one bud is in an ear.
    case either
    /// Only while both are.
    case both
}

/// Which microphone Earshot makes the default source (docs/policy.md §8).
public enum InputFollow: String, Sendable, Hashable, CaseIterable {
    /// The default source follows the worn headset (and the rules the output follows).
    case wornHeadset = "worn-headset"
    /// Earshot leaves the default source alone.
    case never
}

/// `[input] bluetooth-microphone`: when a Bluetooth headset's microphone is used (docs/policy.md
/// §8). Recording from a headset that plays A2DP switches it to the hands-free profile (16 kHz
/// mono): the music's quality goes for as long as anything records.
public enum BluetoothMicrophone: String, Sendable, Hashable, CaseIterable, Codable {
    /// Only calls record from it: the default source is the best other microphone, and each
    /// call's capture stream is pointed at the headset's input on its own.
    case calls
    /// It is a microphone like any other and may become the default source (before 0.10).
    case always
    /// Earshot never chooses a Bluetooth microphone by itself (a user's pick still holds).
    case never
}

/// `[input]`: the microphone.
public struct InputConfig: Sendable, Hashable {
    public var follow: InputFollow = .wornHeadset
    /// `[input] bluetooth-microphone`.
    public var bluetoothMicrophone: BluetoothMicrophone = .calls
    /// `[input] call-applications`: `application.name`s whose capture streams are calls even
    /// without `media.role = Communication`. The default is WirePlumber 0.4.13's own list for
    /// the same purpose (`src/config/policy.lua.d/10-default-policy.lua`,
    /// `bluetooth_policy.policy["media-role.applications"]`).
    public var callApplications: [String] = InputConfig.wirePlumberCallApplications
    public static let wirePlumberCallApplications = [
        "Firefox", "Chromium input", "Google Chrome input", "Brave input", "Microsoft Edge input", "Vivaldi input",
        "ZOOM VoiceEngine", "Telegram Desktop", "telegram-desktop", "linphone", "Mumble", "WEBRTC VoiceEngine", "Skype",
        "Firefox Developer Edition",
    ]
    /// At most this many call applications, each at most `callApplicationLength` bytes.
    public static let callApplicationLimit = 256
    public static let callApplicationLength = 256
    /// `[input] tier-order`: the input's own tier order (a rule's microphone above `worn`);
    /// nil ranks the input by the top-level `tier-order`, as the output.
    public var tierOrder: [RankTier]?
    public init() {}
}

/// The built-in headset drivers (docs/drivers.md): which families run, and how they read wear.
public struct DriversConfig: Sendable, Hashable {
    /// AirPods and Beats (AAP over L2CAP).
    public var aap = true
    /// Samsung Galaxy Buds (RFCOMM through BlueZ).
    public var galaxyBuds = true
    /// Sony headphones and earbuds that speak MDR (RFCOMM through BlueZ).
    public var sony = true
    public var inEar: WearRule = .either
    /// Devices no driver touches (another program reads them, or the user reports them).
    public var ignore: [BluetoothAddress] = []
    /// Offer each headset's battery to BlueZ, which shows it to the desktop (UPower).
    public var batteryToDesktop = true
    public init() {}
}

/// Everything the policy can be told. The built-in defaults are `PolicyConfig()`.
public struct PolicyConfig: Sendable, Hashable {
    public var hostAddresses: [BluetoothAddress] = []
    public var restorePrevious = true
    public var classOrder: [SinkClass] = SinkClass.defaultOrder
    public var personalClasses: [SinkClass] = SinkClass.defaultPersonal
    public var onDelay: Milliseconds = 0
    public var offGrace: Milliseconds = 400
    /// How long a node that appeared must stay before it counts (§1 `settling`); 0: at once.
    public var arrivalSettle: Milliseconds = 200
    /// How long a node that keeps coming and going must stay before it counts.
    public var flapHold: Milliseconds = 10_000
    /// The ranking's tiers, compared in this order (docs/policy.md §2): every tier exactly once.
    public var tierOrder: [RankTier] = RankTier.defaultOrder
    public var playback = PlaybackConfig()
    public var input = InputConfig()
    public var drivers = DriversConfig()
    /// `[record] keep-hours`: how many hours of inputs the daemon keeps on its own, for
    /// `earshot record --since`; 0 keeps none.
    public var recordKeepHours = 0
    public var rules: [NodeRule] = []
    public var accessories: [StaticAccessory] = []
    /// The file it came from; nil for the built-in defaults.
    public var file: String?

    public init() {}

    public static let builtIn = PolicyConfig()

    /// The tier order `direction` ranks by: the input's own when `[input] tier-order` is set,
    /// else the top-level one (§2, §8).
    public func tierOrder(for direction: AudioDirection) -> [RankTier] {
        direction == .input ? input.tierOrder ?? tierOrder : tierOrder
    }
}
