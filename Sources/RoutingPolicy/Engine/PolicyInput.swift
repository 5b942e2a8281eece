import AudioGraph

/// Everything that can make the policy decide again. A live daemon feeds these from PipeWire,
/// the control API, its timer and its config watcher; `earshot eval` feeds them from a script.
public enum PolicyInput: Sendable {
    /// The first decision, over the graph the engine was made with.
    case start
    case graphChanged(GraphChange)
    /// A whole new graph (after a reconnect): sinks not seen before count as arrived.
    case graphReplaced(Graph)
    case accessory(AccessoryRequest)
    /// Someone other than Earshot set the default sink by hand (wpctl, pavucontrol, GNOME).
    case userSelectedDefault(String)
    /// Someone other than Earshot set the default source by hand (§8).
    case userSelectedSource(String)
    /// The deadline the last outcome asked for has come; fires the one transition due first.
    case timerFired
    case configReplaced(PolicyConfig)
    /// The addresses learnt while running (BlueZ's adapters) are now these; they replace the
    /// previously learnt ones and add to the config's `host-addresses`.
    case hostAddressesChanged([HostAddress])
}

/// What one input did: a decision, and when to send `.timerFired` next (nil: no timer pending).
///
/// Most inputs are decided: the engine ranks every sink and `decision` is the result. An input
/// that cannot affect any decision — a port, link or client event, a metadata change other than
/// the `default` metadata's sink keys, a node or device change that touches nothing ranking
/// reads — is taken without ranking: `isUnchanged` is true, `decided` is nil, and `decision`
/// is the last decision restated for this input (its ranking and default, `changed` false, no
/// reason), exactly what ranking would have produced. The daemon then has nothing to apply.
public struct PolicyOutcome: Sendable {
    public var decision: Decision
    public var nextDeadline: Milliseconds?
    /// True when the input could not affect a decision and nothing was ranked.
    public var isUnchanged: Bool

    public init(decision: Decision, nextDeadline: Milliseconds?, isUnchanged: Bool) {
        self.decision = decision
        self.nextDeadline = nextDeadline
        self.isUnchanged = isUnchanged
    }

    /// The decision when one was made; nil when the input changed nothing (`isUnchanged`).
    public var decided: Decision? { isUnchanged ? nil : decision }
}
