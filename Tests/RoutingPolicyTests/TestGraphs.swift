import WireFields
import AudioGraph
import Foundation
import PolicyEval
import RoutingPolicy

/// Small hand-made graphs for the rule tables, named after what they model.
enum Sinks {
    static let speakers = "alsa_output.pci-0000_00_1f.3.analog-stereo"
    static let hdmi = "alsa_output.pci-0000_00_1f.3.hdmi-stereo"
    static let dac = "alsa_output.usb-FiiO_K3-00.analog-stereo"
    static let headphones = "bluez_output.AA_BB_CC_DD_EE_FF.1"
    static let headset = "bluez_output.50_C2_ED_12_34_56.1"
    static let headphonesAddress = "AA:BB:CC:DD:EE:FF"
    static let headsetAddress = "50:C2:ED:12:34:56"
    static let host = "11:22:33:44:55:66"
    static let otherHost = "77:88:99:AA:BB:CC"

    static func node(_ id: ObjectID, _ name: String, _ props: Properties) -> Node {
        var all = props
        all["node.name"] = name
        all["media.class"] = "Audio/Sink"
        all["object.serial"] = String(id + 1000)
        return Node(id: id, state: .suspended, props: all)
    }

    static let speakersNode = node(40, speakers, ["device.bus": "pci", "device.form-factor": "internal"])
    static let hdmiNode = node(41, hdmi, ["device.bus": "pci", "device.profile.name": "hdmi-stereo"])
    static let dacNode = node(42, dac, ["device.bus": "usb"])
    /// A USB headset: personal by its form factor (a USB DAC is not, issue 19).
    static let usbHeadset = "alsa_output.usb-Logitech_PRO_X-00.analog-stereo"
    static let usbHeadsetNode = node(42, usbHeadset, ["device.bus": "usb", "device.form-factor": "headset"])
    static let headphonesNode = node(43, headphones, ["device.bus": "bluetooth", "device.form-factor": "headphone", "api.bluez5.address": headphonesAddress])
    static let headsetNode = node(44, headset, ["device.bus": "bluetooth", "device.form-factor": "headset", "api.bluez5.address": headsetAddress])

    /// A graph of `nodes` whose `default` metadata names `configured` as the user's default.
    static func graph(_ nodes: [Node], configured: String? = speakers) -> Graph {
        var graph = Graph()
        for node in nodes { graph.apply(.node(node)) }
        var metadata = Metadata(id: 30, props: ["metadata.name": "default"])
        if let configured {
            metadata.set(subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: #"{"name":"\#(configured)"}"#)
        }
        graph.apply(.metadata(metadata))
        return graph
    }

    static let all = [speakersNode, hdmiNode, dacNode, headphonesNode, headsetNode]
    static var desktop: Graph { graph(all) }
}

/// Shorthand for accessory requests in tables.
enum Requests {
    static func register(
        _ accessory: String, caps: [AccessoryCapability] = [.audioSwitching, .placement], placement: Placement? = nil,
        primary: String? = nil, secondary: String? = nil, reporter: String = "org.example.reporter"
    ) -> PolicyInput {
        let identity = AccessoryIdentity(parsing: accessory)!
        let configuration = AccessoryConfiguration(
            capabilities: AccessoryCapabilities(caps), placement: placement,
            primarySource: primary.flatMap(BluetoothAddress.init), secondarySource: secondary.flatMap(BluetoothAddress.init))
        return .accessory(.register(identity, reporter: reporter, configuration))
    }

    static func place(_ accessory: String, _ placement: Placement) -> PolicyInput {
        .accessory(.update(AccessoryIdentity(parsing: accessory)!, AccessoryUpdate(placement: .set(placement))))
    }

    static func sources(_ accessory: String, primary: FieldChange<BluetoothAddress> = .keep, secondary: FieldChange<BluetoothAddress> = .keep) -> PolicyInput {
        .accessory(.update(AccessoryIdentity(parsing: accessory)!, AccessoryUpdate(primarySource: primary, secondarySource: secondary)))
    }

    static func unregister(_ accessory: String) -> PolicyInput {
        .accessory(.unregister(AccessoryIdentity(parsing: accessory)!))
    }

    static func address(_ text: String) -> BluetoothAddress { BluetoothAddress(text)! }
}

/// Runs a script on a fresh engine and returns every decision (the initial one first).
func run(
    _ steps: [(Milliseconds, PolicyInput)], graph: Graph = Sinks.desktop, config: PolicyConfig = PolicyConfig(),
    hosts: [String] = [Sinks.host]
) -> [Decision] {
    var engine = PolicyEngine(graph: graph, config: config, hostAddresses: hosts.map(Requests.address))
    return PolicyRun.decisions(&engine, inputs: steps.map { TimedInput(at: $0.0, $0.1) })
}

func fixtureURL(_ name: String) -> URL {
    Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")!
}

extension PolicyEngine {
    /// A node that appears and stays: the add at `at`, then the settle timer when it is due
    /// (§1 `settling`); the settled decision.
    @discardableResult
    mutating func arrive(_ node: Node, at now: Milliseconds) -> Decision {
        let added = handle(.graphChanged(.node(node)), at: now)
        guard let due = added.nextDeadline, due <= now + config.arrivalSettle else { return added.decision }
        return handle(.timerFired, at: due).decision
    }
}
