/// Why the default output changed, in the vocabulary of docs/policy.md §6 (after AVAudioSession's
/// route-change reasons).
public enum RouteChangeReason: String, Sendable, Hashable, CaseIterable, Codable {
    case initial
    case newDeviceAvailable = "new-device-available"
    case oldDeviceUnavailable = "old-device-unavailable"
    case placementChanged = "placement-changed"
    case sourceChanged = "source-changed"
    case userOverride = "user-override"
    case configChanged = "config-changed"
    case noSuitableRoute = "no-suitable-route"
}

/// What made the engine decide.
public enum DecisionTrigger: Sendable, Hashable, CustomStringConvertible {
    case initial
    case accessory(verb: String, AccessoryIdentity)
    case timer(PendingPlacement.Kind, AccessoryIdentity)
    case sinkAdded(String)
    /// A source (a microphone) appeared (§8).
    case sourceAdded(String)
    case nodeChanged(String)
    case deviceChanged(String)
    case removed(String)
    /// Nodes that arrived earlier stayed their settle time and now count (§1 `settling`).
    case settled(String)
    case otherGraphChange
    case graphReplaced
    case userSelected(String)
    /// Someone other than Earshot set the default source by hand (§8).
    case userSelectedSource(String)
    case configReplaced
    /// This host's learnt Bluetooth addresses changed (a BlueZ adapter came or went).
    case hostAddressesChanged
    /// `.timerFired` with nothing due (a stale or early daemon timer).
    case nothingDue
    /// A request refused before it named a valid accessory.
    case refused(verb: String, subject: String)

    public var description: String {
        switch self {
        case .initial: "initial"
        case .accessory(let verb, let identity): "\(verb) \(identity)"
        case .timer(let kind, let identity): "\(kind.rawValue) \(identity)"
        case .sinkAdded(let name), .sourceAdded(let name): "add \(name)"
        case .nodeChanged(let name): "change \(name)"
        case .deviceChanged(let name): "change device \(name)"
        case .removed(let name): "remove \(name)"
        case .settled(let names): "settled \(names)"
        case .otherGraphChange: "graph"
        case .graphReplaced: "graph replaced"
        case .userSelected(let name): "select \(name)"
        case .userSelectedSource(let name): "select-source \(name)"
        case .configReplaced: "config replaced"
        case .hostAddressesChanged: "host addresses"
        case .nothingDue: "timer (nothing due)"
        case .refused(let verb, let subject): "\(verb) \(subject)"
        }
    }
}
