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
    /// The deadline the last outcome asked for has come; fires the one transition due first.
    case timerFired
    case configReplaced(PolicyConfig)
    /// The addresses learnt while running (BlueZ's adapters) are now these; they replace the
    /// previously learnt ones and add to the config's `host-addresses`.
    case hostAddressesChanged([HostAddress])
}

/// A decision, and when to send `.timerFired` next (nil: no timer pending).
public struct PolicyOutcome: Sendable {
    public var decision: Decision
    public var nextDeadline: Milliseconds?
}
