import AudioGraph

/// What a Bluetooth source is to `[input] bluetooth-microphone` (docs/policy.md §8): whether
/// recording from it costs the headset its music quality.
enum BluetoothInput: Sendable, Hashable {
    /// WirePlumber 0.5's input node of a headset that has both profiles (`bluez5.loopback`,
    /// named `bluez_input.<address>`): it exists while the headset plays A2DP and carries no
    /// sound until a recording switches the headset to the hands-free profile.
    case profileSwitching
    /// A source of the hands-free profile (HSP/HFP: the SCO microphone, WirePlumber 0.4's
    /// `bluez_input.<address>.0`).
    case handsFree
    /// Any other Bluetooth source (a duplex A2DP codec's, LE Audio's, or one that does not
    /// say its profile): recording from it switches nothing.
    case other

    /// `node` as a Bluetooth microphone, or nil when it is none.
    init?(_ node: Node, in graph: Graph) {
        if node.props["bluez5.loopback"] == "true" {
            self = .profileSwitching
        } else if let profile = node.props["api.bluez5.profile"], BluetoothProfile(profile) == .handsFree {
            self = .handsFree
        } else if graph.bluetoothAddress(of: node) != nil || graph.property("device.api", of: node) == "bluez5" {
            self = .other
        } else {
            return nil
        }
    }
}

/// A Bluetooth node's profile (`api.bluez5.profile`), as far as the microphone cares.
enum BluetoothProfile: Sendable, Hashable {
    /// `a2dp-sink`, `a2dp-source`, `bap-*`…: the music profiles.
    case music
    /// `headset-head-unit`, `headset-audio-gateway`, `hsp-*`, `hfp-*`: the hands-free profiles.
    case handsFree

    init(_ name: String) {
        self = name.hasPrefix("headset-") || name.hasPrefix("hsp") || name.hasPrefix("hfp") ? .handsFree : .music
    }
}

/// What the input's ranking needs to know to leave a Bluetooth microphone to calls (§8):
/// which Bluetooth devices play the hands-free profile now, and which of those are in it for
/// a call.
struct CallsOnlyInputs: Sendable {
    var rule: BluetoothMicrophone
    /// Devices with a node in a hands-free profile.
    var handsFreeDevices: Set<ObjectID>
    /// Hands-free devices that switched for a call (a call was recording while they played
    /// A2DP): their microphone is still the calls' only.
    var heldForCalls: Set<ObjectID>

    /// Why `source` is not a candidate for the default source under this rule; nil when it is.
    func rejection(of source: SinkFeatures) -> Rejection? {
        guard let kind = source.bluetooth else { return nil }
        switch rule {
        case .always: return nil
        case .never: return .bluetoothNever
        case .calls:
            let device = source.deviceID
            switch kind {
            case .profileSwitching:
                guard let device, handsFreeDevices.contains(device) else { return .callsOnly(handsFree: false) }
                return heldForCalls.contains(device) ? .callsOnly(handsFree: true) : nil
            case .handsFree:
                guard let device, heldForCalls.contains(device) else { return nil }
                return .callsOnly(handsFree: true)
            case .other: return nil
            }
        }
    }
}
